// Constants of the Cairn hook ABI v1. They mirror sdk/abi/abi.go, the single source of
// truth; keep the two in step.

/** ABI_VERSION is the ABI version this SDK implements. */
export const ABI_VERSION: i32 = 1;

/** STATUS_OK: the call succeeded; the output (possibly empty) is the result. */
export const STATUS_OK: i32 = 0;
/** STATUS_REJECT: a precommit refuses the write; the output is the reason (403). */
export const STATUS_REJECT: i32 = 1;
/** STATUS_ERROR: the function failed; the output is a message. */
export const STATUS_ERROR: i32 = 2;

/** Log levels of cairn.log (slog's levels divided by four). */
export const LOG_DEBUG: i32 = -1;
export const LOG_INFO: i32 = 0;
export const LOG_WARN: i32 = 1;
export const LOG_ERROR: i32 = 2;

/** MAX_OUTPUT_BYTES is the largest output the host accepts from one call. */
export const MAX_OUTPUT_BYTES: i32 = 8 << 20;
/** MAX_LOG_BYTES_PER_CALL caps what one call may write to the log. */
export const MAX_LOG_BYTES_PER_CALL: i32 = 64 << 10;
/** KEY_HASH_MAX_BYTES is the longest chash_keyfun result (a big-endian 160-bit integer). */
export const KEY_HASH_MAX_BYTES: i32 = 20;

/** Operations a commit hook sees. */
export const OP_PUT = "put";
export const OP_DELETE = "delete";

/** WILDCARD in a linkfun spec matches any bucket or any tag. */
export const WILDCARD = "_";

/** The metadata name prefixes of the two dialects; readers accept both. */
export const PREFIX_STORE = "X-Store-";
export const PREFIX_RIAK = "X-Riak-";
