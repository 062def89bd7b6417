// Package abi is the Cairn hook ABI, version 1: the contract between the Cairn server
// and a WebAssembly extension module. It is the single source of truth for the names,
// signatures, status codes and limits below; docs/abi.md explains them for module
// authors and every guest SDK (sdk/go, sdk/rust, sdk/c, sdk/assemblyscript) mirrors them.
//
// # Module shape
//
// A module is a core WebAssembly module (a reactor: it has no main to run). It exports:
//
//	memory                                  its linear memory
//	cairn_abi_v1  () -> ()                  the ABI marker; never called
//	cairn_alloc   (n: i32) -> (ptr: i32)    a buffer of at least n bytes for the next input
//	<function>    (ptr: i32, len: i32) -> (status: i32)   one per extension function
//	_initialize   () -> ()                  optional; run once when an instance is created
//
// and may import, from the host module "cairn":
//
//	output (ptr: i32, len: i32) -> ()       the call's result bytes; copied at once; the last call wins
//	log    (level: i32, ptr: i32, len: i32) -> ()   a line for the server log (capped per call)
//
// plus any function of wasi_snapshot_preview1 (no files, no environment, no arguments;
// stdout and stderr go to the server log). Instances serving chash_keyfun get no clock and
// no random source: both clocks read zero and random_get fails (EIO), so placement stays
// deterministic.
// Any other import is refused when the module is registered.
//
// # A call
//
// For every call the host takes an idle instance of the module (one instance serves one
// call at a time), calls cairn_alloc(len(input)), copies the input to the returned
// pointer, and calls the function with that pointer and length under a deadline. The
// function returns a status and, through "output", a payload whose meaning depends on
// the extension point and the status. A trap, a timeout, memory growth beyond the cap, an
// unknown status or an output that does not parse makes the call fail; the instance is
// then discarded and replaced.
//
// # Encoding
//
// Inputs and outputs are JSON (RFC 8259, UTF-8). Objects use the shape of the reference
// system's JavaScript MapReduce object; see docs/abi.md and the Input* names below.
package abi

// Version is the ABI version this package describes.
const Version = 1

// Names of the exports and imports of ABI v1.
const (
	// ExportMemory is the guest's linear memory.
	ExportMemory = "memory"
	// ExportMarker is the ABI marker export, a function with no parameters and results.
	// Its presence declares ABI v1; it is never called.
	ExportMarker = "cairn_abi_v1"
	// ExportAlloc is the guest allocator, (n i32) -> (ptr i32). The buffer it returns
	// belongs to the guest and must stay valid until the next call of ExportAlloc.
	ExportAlloc = "cairn_alloc"
	// ExportInitialize is the optional reactor initializer, run once per instance.
	ExportInitialize = "_initialize"

	// ImportModule is the host module the guest imports from. A future incompatible
	// version gets a new name ("cairn_v2").
	ImportModule = "cairn"
	// ImportOutput is "cairn"."output", (ptr i32, len i32) -> (): the call's result.
	ImportOutput = "output"
	// ImportLog is "cairn"."log", (level i32, ptr i32, len i32) -> (): one log line.
	ImportLog = "log"

	// WASIModule is the only other import module a guest may use.
	WASIModule = "wasi_snapshot_preview1"
)

// Status is what an extension function returns.
type Status int32

// The statuses of ABI v1.
const (
	// StatusOK: the call succeeded; the output (possibly empty) is the result.
	StatusOK Status = 0
	// StatusReject: a precommit refuses the write; the output is a UTF-8 reason shown to
	// the client with 403. Any other extension point treats it as StatusError.
	StatusReject Status = 1
	// StatusError: the function failed; the output is a UTF-8 message for the log and,
	// where the extension point reports errors, for the client.
	StatusError Status = 2
)

// Log levels for ImportLog (slog's levels divided by four).
const (
	LogDebug = -1
	LogInfo  = 0
	LogWarn  = 1
	LogError = 2
)

// Limits and defaults of the host. Per-module settings may lower them, and an
// operator may raise the ceilings with server flags.
const (
	// MaxModuleBytes is the largest module accepted at registration.
	MaxModuleBytes = 16 << 20
	// MaxOutputBytes is the largest output of one call.
	MaxOutputBytes = 8 << 20
	// MaxLogBytesPerCall caps what one call may write to the log (lines beyond are dropped
	// and counted).
	MaxLogBytesPerCall = 64 << 10
	// DefaultMemoryPages is the default memory cap of an instance, in 64 KiB pages (16 MiB).
	DefaultMemoryPages = 256
	// KeyHashMaxBytes is the longest chash_keyfun result: 20 bytes. A result is the
	// high-order end of a 160-bit big-endian ring position: zero bytes pad a shorter one
	// on the right, so an 8-byte hash spreads keys over the whole ring.
	KeyHashMaxBytes = 20
)

// Default deadlines per extension point, in milliseconds.
const (
	DefaultTimeoutPrecommitMS  = 100
	DefaultTimeoutPostcommitMS = 1000
	DefaultTimeoutKeyFunMS     = 100
	DefaultTimeoutLinkFunMS    = 100
	DefaultTimeoutMapReduceMS  = 5000
)

// JSON field names of the inputs of ABI v1.
//
//	precommit, postcommit  {"op": "put"|"delete", "object": Object}
//	chash_keyfun           {"bucket_type": T, "bucket": B, "key": K}
//	linkfun                {"object": Object, "spec": {"bucket": B|"_", "tag": T|"_"}}
//	map                    {"object": Object} or {"not_found": {"bucket_type","bucket","key"}},
//	                       plus "keydata": any and "arg": any
//	reduce                 {"values": [any...], "arg": any}
//
// Outputs: precommit: nothing (accept unchanged) or an Object (accept this instead) with
// StatusOK, a reason with StatusReject; postcommit: ignored; chash_keyfun: 1 to 20 raw
// bytes; linkfun: [[bucket, key, tag], ...]; map and reduce: a JSON array. Reduce must be
// re-reducible: its output may be fed back to it with more values.
const (
	InputOp       = "op"
	InputObject   = "object"
	InputSpec     = "spec"
	InputNotFound = "not_found"
	InputKeyData  = "keydata"
	InputArg      = "arg"
	InputValues   = "values"

	OpPut    = "put"
	OpDelete = "delete"

	// Wildcard in a linkfun spec: any bucket or any tag.
	Wildcard = "_"
)

// JSON field names of an Object (the reference system's JavaScript object shape).
//
//	{"bucket_type": T, "bucket": B, "key": K, "vclock": base64,
//	 "values": [{"metadata": {...}, "data": "...", "data_b64": "..."}]}
//
// One element of "values" per sibling. "data" carries the value when it is valid UTF-8,
// "data_b64" (standard base64) otherwise. Metadata names use the server's dialect
// ("X-Store-…" by default, "X-Riak-…" with --dialect riak); the host accepts either in
// objects a precommit returns.
const (
	ObjBucketType = "bucket_type"
	ObjBucket     = "bucket"
	ObjKey        = "key"
	ObjVClock     = "vclock"
	ObjValues     = "values"
	ObjMetadata   = "metadata"
	ObjData       = "data"
	ObjDataB64    = "data_b64"

	MetaContentType     = "content-type"
	MetaCharset         = "charset"
	MetaContentEncoding = "content-encoding"
	MetaLinks           = "Links"
	MetaIndex           = "index"
	// The names below follow the dialect: prefix "X-Store-" or "X-Riak-".
	MetaVTagSuffix         = "VTag"
	MetaLastModifiedSuffix = "Last-Modified"
	MetaUserSuffix         = "Meta"
	MetaDeletedSuffix      = "Deleted"

	// UserMetaDatatype is the user-metadata name (X-Store-Meta-Datatype, X-Riak-Meta-Datatype)
	// that marks the data-type view of a key of a datatype bucket: its value names the type
	// (counter, set, map, hll, gset) and the value is the type's JSON,
	// {"type": T, "value": V}, as application/json. A precommit may accept or reject such a
	// value, not replace it by a different one.
	UserMetaDatatype = "Datatype"
)
