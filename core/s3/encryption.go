package s3

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

// SSEAlgorithm is the one server-side encryption algorithm offered (SSE-S3's
// x-amz-server-side-encryption value, SSE-C's customer algorithm, and bucket default
// encryption's SSEAlgorithm).
const SSEAlgorithm = "AES256"

// The bucket policy actions of bucket default encryption (DELETE ?encryption is
// s3:PutEncryptionConfiguration, as AWS defines it).
const (
	ActionPutEncryptionConfiguration = "s3:PutEncryptionConfiguration"
	ActionGetEncryptionConfiguration = "s3:GetEncryptionConfiguration"
)

// Encryption records how the data of an object (Manifest.SSE) or of a multipart upload
// (Upload.SSE) is encrypted at rest (see core/s3/sse for the format): its data key,
// wrapped with the master key (SSE-S3) or the customer's key (SSE-C), and its nonce
// prefix. The customer's key is never stored: the wrapped data key, which opens only
// with it, is what verifies it.
type Encryption struct {
	// Algorithm is SSEAlgorithm.
	Algorithm string `json:"alg"`
	// Customer says the data key is wrapped with the customer's key (SSE-C).
	Customer bool `json:"customer,omitempty"`
	// MasterKeyID, for SSE-S3, is the id of the master key that wrapped the data key.
	MasterKeyID string `json:"master_key_id,omitempty"`
	// WrappedKey is the data key, wrapped (sse.Wrap).
	WrappedKey []byte `json:"wrapped_key"`
	// NoncePrefix is the object's random nonce prefix.
	NoncePrefix []byte `json:"nonce_prefix"`
	// Format is the sealing format (core/s3/sse): 0 for version 1 (extents bound to
	// their ids only: the records of the first release), sseFormat for version 2
	// (extents bound to their part numbers, the layout authenticated).
	Format int `json:"format,omitempty"`
	// Layout, for format 2, is the MAC of the object's extents in order (sse.Layout).
	// Every format 2 object has one but an SSE-C multipart object completed on a server
	// without a master key by a completion that did not carry the customer's key.
	Layout []byte `json:"layout,omitempty"`
	// WrappedLayoutKey, on an SSE-C multipart upload's record only, is its layout key
	// wrapped with the master key (when the server has one), for the completion to
	// compute Layout.
	WrappedLayoutKey []byte `json:"wrapped_layout_key,omitempty"`
	// CustomerKeyMD5, for SSE-C, is the base64 MD5 of the customer's key, kept on a
	// multipart upload's record only, for CompleteMultipartUpload to echo (the upload
	// record is gone once completed or aborted). A manifest keeps none: an unsalted
	// hash would link the objects of one key and could be looked up; GET, HEAD and copy
	// echo the MD5 the request gives with the key. Manifests written before may carry
	// it: it is ignored.
	CustomerKeyMD5 string `json:"customer_key_md5,omitempty"`
}

// stored returns e as a manifest keeps it: without the customer key's MD5 (nil for
// nil).
func (e *Encryption) stored() *Encryption {
	if e == nil {
		return nil
	}
	c := *e
	c.CustomerKeyMD5, c.WrappedLayoutKey = "", nil
	return &c
}

// sseFormat is the sealing format of new objects and uploads (see Encryption.Format).
const sseFormat = 2

// errLayout means an encrypted object's record names data it was not completed with.
var errLayout = errors.New("s3: the encrypted object's layout fails authentication: its record names other data than it was stored with")

// CustomerKey is an SSE-C key as a request gives it, checked by the interface: the 32
// key bytes and the base64 MD5 the request named.
type CustomerKey struct {
	Key []byte
	MD5 string
}

// SSERequest is the encryption a write asks for: SSE-S3, or SSE-C with the customer's
// key, or (neither) the bucket's default.
type SSERequest struct {
	S3       bool
	Customer *CustomerKey
}

// requested reports whether the request asks for an encryption itself.
func (q SSERequest) requested() bool { return q.S3 || q.Customer != nil }

// BucketEncryption is a bucket's default encryption (PUT ?encryption): objects written
// without encryption headers are SSE-S3.
type BucketEncryption struct {
	// Algorithm is SSEAlgorithm.
	Algorithm string `json:"alg"`
	// BucketKeyEnabled is kept and echoed; it changes nothing (it is about KMS calls).
	BucketKeyEnabled bool `json:"bucket_key_enabled,omitempty"`
}

// The errors of encrypted objects, with AWS's codes and texts.
var (
	errSSEKeyMissing = Errorf(InvalidRequest, "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
	errSSENotApplies = Errorf(InvalidRequest, "The encryption parameters are not applicable to this object.")
	// errSSEBoundNoMaster refuses the keyless completion, on a server without a master
	// key, of an SSE-C upload initiated on one with a master key: its data key is bound
	// to a layout MAC that only the master key or the customer's key can make, and an
	// object stored without it would never read.
	errSSEBoundNoMaster = Errorf(InvalidRequest, "This upload was initiated on a server with a server-side encryption master key: complete it with the x-amz-server-side-encryption-customer-* headers of its key, or on a server with that master key.")
	errNoMasterKey      = Errorf(NotImplemented, "A header or query you provided requested a function that is not implemented: server-side encryption with server-managed keys (no master key is configured)")
	errNoBucketSSE      = Errorf(ServerSideEncryptionConfigurationNotFoundError, "The server side encryption configuration was not found")
	// errNotUnsealed means an encrypted object's data was read before Object.Unseal.
	errNotUnsealed = errors.New("s3: an encrypted object read without its key")
)

// dataKey is an object's data key in clear, with its nonce prefix: what seals and opens
// its extents. A nil *dataKey means unencrypted data.
type dataKey struct {
	key, prefix []byte
	customer    bool
	format      int  // Encryption.Format
	bound       bool // an SSE-C key whose object must have a layout MAC (sse.WrapCustomerKeyBound)
}

// stream returns the sealing stream of the extent id, part number part, of size
// plaintext bytes: by the key's format.
func (k *dataKey) stream(id []byte, part int, size int64) (*sse.Stream, error) {
	if k.format < sseFormat {
		return sse.NewStream(k.key, k.prefix, id, size)
	}
	return sse.NewPartStream(k.key, k.prefix, id, uint32(part), size)
}

// layoutOf returns the layout entries of extents (Extent.Part, ids decoded).
func layoutOf(extents []Extent) ([]sse.LayoutEntry, error) {
	out := make([]sse.LayoutEntry, len(extents))
	for i, e := range extents {
		id, err := hex.DecodeString(e.ID)
		if err != nil {
			return nil, wrapf(err, "extent id")
		}
		out[i] = sse.LayoutEntry{Part: uint32(e.Part), ID: id, Size: e.Size}
	}
	return out, nil
}

// setLayout stores on m's encryption record the MAC of its extents under layoutKey.
func setLayout(m *Manifest, layoutKey []byte) error {
	entries, err := layoutOf(m.Extents())
	if err != nil {
		return err
	}
	m.SSE.Layout = sse.Layout(layoutKey, entries)
	return nil
}

// checkLayout verifies, with its data key k, that the format 2 object m has the
// layout it was stored with: its parts in ascending part numbers (1 up; an object
// stored whole is part 0) and its Layout MAC, which only an SSE-C multipart object
// completed without a master key and without the customer's key lacks (its data key
// is not bound: k.bound).
func checkLayout(m *Manifest, k *dataKey) error {
	if k == nil || k.format < sseFormat {
		return nil
	}
	for i, p := range m.Parts {
		if p.Part < 1 || i > 0 && p.Part <= m.Parts[i-1].Part {
			return errLayout
		}
	}
	if m.SSE.Layout == nil {
		if k.customer && !k.bound {
			return nil // an SSE-C multipart object completed without any layout key
		}
		return errLayout
	}
	entries, err := layoutOf(m.Extents())
	if err != nil {
		return err
	}
	if sse.CheckLayout(sse.LayoutKey(k.key), entries, m.SSE.Layout) != nil {
		return errLayout
	}
	return nil
}

// completionLayoutKey returns the layout key with which the completion of upload u,
// given the SSE-C key ck (nil: none), authenticates its object's layout (nil: none),
// and the data key rewrapped for the object (nil: the upload's wrapping stands).
//
//   - SSE-S3: the data key's layout key (the master key opens it).
//   - SSE-C with ck: the data key ck opens gives it; a data key not yet bound to a
//     layout MAC (an upload initiated without a master key) is rewrapped bound
//     (sse.WrapCustomerKeyBound), so that the object's record cannot pass for one
//     completed without a MAC (the upload record's unbound wrapping still could, to
//     someone who read the store while the upload was open: docs/rationale.md).
//   - SSE-C without ck: the layout key the upload keeps wrapped with the master key
//     (WrappedLayoutKey); none for an upload initiated without a master key; refused
//     (errSSEBoundNoMaster) for one initiated with a master key, by a server without one.
//
// Nil for an upload stored in clear or of format 1. ck for an upload that is not SSE-C
// is InvalidRequest, another customer's key AccessDenied (openKey).
func (s *Service) completionLayoutKey(u *Upload, ck *CustomerKey) (lk, rewrapped []byte, err error) {
	e := u.SSE
	if ck != nil {
		k, err := s.openKey(e, ck)
		if err != nil || k.format < sseFormat {
			return nil, nil, err
		}
		if !k.bound {
			if rewrapped, err = sse.WrapCustomerKeyBound(ck.Key, k.key); err != nil {
				return nil, nil, wrapf(err, "wrap data key")
			}
		}
		return sse.LayoutKey(k.key), rewrapped, nil
	}
	switch {
	case e == nil || e.Format < sseFormat:
		return nil, nil, nil
	case !e.Customer:
		k, err := s.openServerKey(e)
		if err != nil {
			return nil, nil, err
		}
		return sse.LayoutKey(k.key), nil, nil
	case e.WrappedLayoutKey == nil:
		return nil, nil, nil
	case s.cfg.MasterKey == nil:
		return nil, nil, errSSEBoundNoMaster
	}
	lk, err = s.cfg.MasterKey.UnwrapLayoutKey(e.WrappedLayoutKey)
	if err != nil {
		return nil, nil, wrapf(err, "unwrap layout key")
	}
	return lk, nil, nil
}

// newEncryption returns the encryption record and data key of a new object (or
// upload) in bucket b that request q asks for: SSE-C with q's key, SSE-S3 when q or
// the bucket's default asks for it, nil otherwise. layout says the object will have a
// layout MAC (an object stored whole always; an upload's completion when the server
// has a master key): an SSE-C data key is then wrapped bound to it. (An SSE-C upload
// without a master key is bound at completion if that is given the key.)
func (s *Service) newEncryption(b *Bucket, q SSERequest, layout bool) (*Encryption, *dataKey, error) {
	if !q.requested() && b.Encryption == nil {
		return nil, nil, nil
	}
	dk := &dataKey{key: sse.NewKey(), prefix: sse.NewNoncePrefix(), customer: q.Customer != nil, format: sseFormat}
	enc := &Encryption{Algorithm: SSEAlgorithm, NoncePrefix: dk.prefix, Format: sseFormat}
	var err error
	if q.Customer != nil {
		enc.Customer = true
		wrap := sse.WrapCustomerKey
		if layout {
			wrap, dk.bound = sse.WrapCustomerKeyBound, true
		}
		enc.WrappedKey, err = wrap(q.Customer.Key, dk.key)
	} else {
		if s.cfg.MasterKey == nil {
			return nil, nil, errNoMasterKey
		}
		enc.MasterKeyID = s.cfg.MasterKey.ID()
		enc.WrappedKey, err = s.cfg.MasterKey.WrapKey(dk.key)
	}
	if err != nil {
		return nil, nil, wrapf(err, "wrap data key")
	}
	return enc, dk, nil
}

// openKey returns the data key of enc (nil: unencrypted) with the request's customer
// key ck (nil: none given). An SSE-C object without a key is InvalidRequest, with
// another key AccessDenied; a key given for data that is not SSE-C is InvalidRequest.
func (s *Service) openKey(enc *Encryption, ck *CustomerKey) (*dataKey, error) {
	if enc == nil || !enc.Customer {
		if ck != nil {
			return nil, errSSENotApplies
		}
		if enc == nil {
			return nil, nil
		}
		return s.openServerKey(enc)
	}
	if ck == nil {
		return nil, errSSEKeyMissing
	}
	k, bound, err := sse.UnwrapCustomerKeyAny(ck.Key, enc.WrappedKey)
	if errors.Is(err, sse.ErrAuth) {
		return nil, errAccessDenied
	}
	if err != nil {
		return nil, wrapf(err, "unwrap data key")
	}
	return &dataKey{key: k, prefix: enc.NoncePrefix, customer: true, format: enc.Format, bound: bound}, nil
}

// openServerKey unwraps an SSE-S3 data key with the master key.
func (s *Service) openServerKey(enc *Encryption) (*dataKey, error) {
	mk := s.cfg.MasterKey
	switch {
	case mk == nil:
		return nil, errors.New("s3: the object is encrypted with a master key and this server has none")
	case enc.MasterKeyID != mk.ID():
		return nil, fmt.Errorf("s3: the object's data key is wrapped with master key %s, this server's is %s", enc.MasterKeyID, mk.ID())
	}
	k, err := mk.UnwrapKey(enc.WrappedKey)
	if err != nil {
		return nil, wrapf(err, "unwrap data key")
	}
	return &dataKey{key: k, prefix: enc.NoncePrefix, format: enc.Format}, nil
}

// etag returns the ETag of data with MD5 sum stored with k: the hex MD5 for plain and
// SSE-S3 data; for SSE-C, as AWS, not the MD5 (which would tell something of the
// plaintext to whoever reads it without the key) but a MAC of it under the data key.
func (k *dataKey) etag(sum []byte) string {
	if k == nil || !k.customer {
		return hex.EncodeToString(sum)
	}
	mac := hmac.New(sha256.New, k.key)
	mac.Write([]byte("cairn-sse/v1 etag"))
	mac.Write(sum)
	return hex.EncodeToString(mac.Sum(nil)[:md5.Size])
}

// sealedBody is a PUT body being sealed: the plaintext's size and MD5.
type sealedBody struct {
	size int64
	sum  hash.Hash
	enc  *sse.Encrypter
}

// sealBody returns in with its body sealed for the extent id, part number part (Size
// the sealed size, no MD5: the sealed body checks the plaintext's MD5 and end itself,
// as finishBody does).
func (k *dataKey) sealBody(id []byte, part int, in PutInput) (PutInput, *sealedBody, error) {
	st, err := k.stream(id, part, in.Size)
	if err != nil {
		return in, nil, wrapf(err, "encrypt")
	}
	b := &sealedBody{size: in.Size, sum: md5.New()}
	plain := in
	b.enc = st.NewEncrypter(io.TeeReader(in.Body, b.sum), func() error {
		_, err := finishBody(plain, b.sum.Sum(nil))
		return err
	})
	in.Body, in.Size, in.MD5 = b.enc, sse.SealedSize(in.Size), nil
	return in, b, nil
}

// storedSize is the number of bytes the extent's data takes in chunks or its blob.
func (e Extent) storedSize() int64 {
	if e.Sealed {
		return sse.SealedSize(e.Size)
	}
	return e.Size
}

// holds reports whether n stored bytes are the extent's data: its stored size, or for
// an empty sealed extent also nothing (a completed upload whose parts were all empty
// names a chunk id that holds no data; a PUT of nothing stores one empty segment).
func (e Extent) holds(n int64) bool {
	return n == e.storedSize() || e.Sealed && e.Size == 0 && n == 0
}

// Unseal readies an encrypted object for reading with the request's SSE-C key ck (nil:
// none given); for an object stored in clear it only checks that no key was given.
// The errors are openKey's. An encrypted object's data cannot be read without it.
func (o *Object) Unseal(ck *CustomerKey) error {
	k, err := o.s.openKey(o.Manifest.SSE, ck)
	if err != nil {
		return err
	}
	if err := checkLayout(o.Manifest, k); err != nil {
		return err
	}
	o.key = k
	return nil
}

// writeSealed writes n plaintext bytes of the sealed extent e from off to w: it reads
// the whole segments that hold them and opens them (any change of the stored bytes is
// an error).
func (o *Object) writeSealed(ctx context.Context, w io.Writer, e Extent, off, n int64) error {
	if o.key == nil {
		return errNotUnsealed
	}
	id, err := hex.DecodeString(e.ID)
	if err != nil {
		return wrapf(err, "read data")
	}
	st, err := o.key.stream(id, e.Part, e.Size)
	if err != nil {
		return wrapf(err, "read data")
	}
	d := st.NewDecrypter(w, off, n)
	defer d.Close()
	so, sn := st.SealedRange(off, n)
	stored := Extent{ID: e.ID, Size: e.storedSize(), ChunkSize: e.ChunkSize, Blob: e.Blob}
	if stored.Blob {
		err = o.writeBlob(ctx, d, stored, so, sn)
	} else {
		err = o.writeChunks(d, stored, so, sn)
	}
	if err != nil {
		return wrapf(err, "read encrypted data")
	}
	return wrapf(d.Finish(), "read encrypted data")
}

// CopyKeys are the SSE-C keys of a part copy: the source object's and the upload's.
type CopyKeys struct {
	Source, Dest *CustomerKey
}

// BucketEncryption returns the bucket's default encryption (its owner, or
// s3:GetEncryptionConfiguration in the bucket policy); none is 404
// ServerSideEncryptionConfigurationNotFoundError, as AWS answers.
func (s *Service) BucketEncryption(ctx context.Context, r Requester, bucket string) (*BucketEncryption, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !ownerOrAllowed(b, r, ActionGetEncryptionConfiguration) {
		return nil, errAccessDenied
	}
	if b.Encryption == nil {
		return nil, errNoBucketSSE
	}
	e := *b.Encryption // b may be the cached record
	return &e, nil
}

// SetBucketEncryption sets the bucket's default encryption (its owner, or
// s3:PutEncryptionConfiguration in the bucket policy). The algorithm must be
// SSEAlgorithm; the interface refuses the others.
func (s *Service) SetBucketEncryption(ctx context.Context, r Requester, bucket string, e BucketEncryption) error {
	if e.Algorithm != SSEAlgorithm {
		return Errorf(MalformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	if s.cfg.MasterKey == nil {
		return errNoMasterKey
	}
	return s.updateBucket(ctx, "set bucket encryption "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutEncryptionConfiguration) {
			return errAccessDenied
		}
		b.Encryption = &e
		return nil
	})
}

// DeleteBucketEncryption removes the bucket's default encryption (its owner, or
// s3:PutEncryptionConfiguration in the bucket policy); none is not an error.
func (s *Service) DeleteBucketEncryption(ctx context.Context, r Requester, bucket string) error {
	return s.updateBucket(ctx, "delete bucket encryption "+bucket, bucket, func(b *Bucket) error {
		if !ownerOrAllowed(b, r, ActionPutEncryptionConfiguration) {
			return errAccessDenied
		}
		if b.Encryption == nil {
			return errUnchanged
		}
		b.Encryption = nil
		return nil
	})
}

// masterKeyRecord is the key of the record that holds the id of the master key every
// SSE-S3 object of the store is wrapped with (the first server to start writes it).
var masterKeyRecord = storage.KeyString(storage.TagS3, "sk", "master")

// recordMasterKey records the master key's id in the store, or checks it against the
// one recorded: a server (a cluster node) with another master key, or with none once a
// key is recorded, could not open the objects the others encrypt, so it must not start.
// A server without a master key on a store without one records nothing.
func (s *Service) recordMasterKey(ctx context.Context) error {
	if s.cfg.MasterKey == nil {
		v, err := s.db.Get(masterKeyRecord)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return nil
		case err != nil:
			return wrapf(err, "read master key id")
		}
		return fmt.Errorf("s3: the store's SSE-S3 objects use master key %s and this server has no master key: start it with the same master key file (--sse-master-key)", v)
	}
	id := s.cfg.MasterKey.ID()
	return s.update(ctx, "record master key id", func(t *txn) error {
		v, err := t.get(masterKeyRecord)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			t.b.Put(masterKeyRecord, []byte(id))
			return nil
		case err != nil:
			return err
		case string(v) != id:
			return fmt.Errorf("s3: the SSE master key has id %s, but the store's encrypted objects use master key %s: every server of a store (every node of a cluster) must have the same master key file", id, v)
		}
		return nil
	})
}

// checkEncryption verifies that m's encryption record is well formed and agrees with
// its extents (all sealed when encrypted, none otherwise). It cannot tell whether a
// wrapped key opens: CheckKeys does for SSE-S3 with the master key; nothing can for
// SSE-C, whose key only the customer has.
func checkEncryption(m *Manifest) error {
	e := m.SSE
	sealed := 0
	for _, x := range m.Extents() {
		if x.Sealed {
			sealed++
		}
	}
	if e == nil {
		if sealed > 0 {
			return errors.New("encrypted extents and no encryption record")
		}
		return nil
	}
	// Only an SSE-C multipart object completed without a master key lacks a layout MAC
	// (which a reader with the key tells apart: sse.WrapCustomerKeyBound).
	layoutOptional := e.Customer && (len(m.Parts) > 0 || m.Size == 0)
	switch {
	case sealed != len(m.Extents()):
		return errors.New("encryption record and extents stored in clear")
	case e.Algorithm != SSEAlgorithm:
		return fmt.Errorf("encryption algorithm %q", e.Algorithm)
	case len(e.NoncePrefix) != sse.NoncePrefixSize:
		return fmt.Errorf("nonce prefix of %d bytes", len(e.NoncePrefix))
	case len(e.WrappedKey) != sse.WrappedSize:
		return fmt.Errorf("wrapped data key of %d bytes", len(e.WrappedKey))
	case e.Format != 0 && e.Format != sseFormat:
		return fmt.Errorf("sealing format %d", e.Format)
	case e.Format == 0 && e.Layout != nil || e.Layout != nil && len(e.Layout) != sha256.Size:
		return fmt.Errorf("layout MAC of %d bytes (format %d)", len(e.Layout), e.Format)
	case e.Format == sseFormat && e.Layout == nil && !layoutOptional:
		return errors.New("no layout MAC")
	case e.WrappedLayoutKey != nil:
		return errors.New("a wrapped layout key on an object")
	case e.Customer && (e.MasterKeyID != "" || e.CustomerKeyMD5 != "" && len(e.CustomerKeyMD5) != 24):
		return errors.New("SSE-C record with a master key id or a malformed key MD5")
	case !e.Customer && (e.MasterKeyID == "" || e.CustomerKeyMD5 != ""):
		return errors.New("SSE-S3 record without a master key id or with a customer key's MD5")
	}
	return nil
}

// KeyCheckReport is what CheckKeys found.
type KeyCheckReport struct {
	// ServerKeys counts the SSE-S3 data keys unwrapped, CustomerKeys the SSE-C records
	// (which cannot be opened without their customers' keys).
	ServerKeys, CustomerKeys int
	// Problems counts the keys that did not unwrap.
	Problems int
}

// CheckKeys unwraps, with the master key mk, the data key of every SSE-S3 object
// (current records and every version, delete markers having none) and upload of db,
// without changing anything: the error names the first maxCheckErrors that do not
// open. A data key is counted once however many records name it (a current record and
// its version are copies).
func CheckKeys(db storage.Store, mk *sse.MasterKey) (KeyCheckReport, error) {
	var rep KeyCheckReport
	var errs []error
	s := &Service{cfg: Config{MasterKey: mk}}
	seen := map[string]bool{} // wrapped data keys checked
	check := func(what string, e *Encryption) {
		if e != nil {
			if seen[string(e.WrappedKey)] {
				return
			}
			seen[string(e.WrappedKey)] = true
		}
		switch {
		case e == nil:
		case e.Customer:
			rep.CustomerKeys++
		default:
			rep.ServerKeys++
			if _, err := s.openServerKey(e); err != nil {
				rep.Problems++
				if len(errs) < maxCheckErrors {
					errs = append(errs, fmt.Errorf("s3: %s: %w", what, err))
				}
			}
		}
	}
	for _, table := range []string{"o", "v", "mu"} {
		it := db.IteratePrefix(storage.KeyString(storage.TagS3, table))
		for it.Next() {
			var rec struct {
				SSE *Encryption `json:"sse"`
			}
			if json.Unmarshal(it.Value(), &rec) == nil {
				check(fmt.Sprintf("%q", it.Key()), rec.SSE)
			}
		}
		err := it.Err()
		it.Release()
		if err != nil {
			return rep, err
		}
	}
	return rep, errors.Join(errs...)
}

// bodyHash is the hash writeBlob and writeChunks compute over what they store: the
// MD5, except for a sealed body, whose plaintext MD5 the sealedBody computes (the MD5
// of the sealed bytes would be thrown away).
func bodyHash(in PutInput) hash.Hash {
	if _, ok := in.Body.(*sse.Encrypter); ok {
		return nopHash{}
	}
	return md5.New()
}

// nopHash is a hash.Hash that computes nothing.
type nopHash struct{}

func (nopHash) Write(p []byte) (int, error) { return len(p), nil }
func (nopHash) Sum(b []byte) []byte         { return b }
func (nopHash) Reset()                      {}
func (nopHash) Size() int                   { return md5.Size }
func (nopHash) BlockSize() int              { return md5.BlockSize }
