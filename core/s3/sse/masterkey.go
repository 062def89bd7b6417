package sse

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MasterKeyFile is the name, in the data directory, of the master key file created at
// first start.
const MasterKeyFile = "sse-master.key"

// MasterKey is the key that wraps the data keys of SSE-S3 objects. Its file holds the
// 32 key bytes as 64 hex digits (and an optional line feed), readable by its owner
// only.
type MasterKey struct {
	key []byte
	id  string
}

// keyAAD binds a wrapped data key to the scheme that uses it.
func keyAAD(scheme string) []byte { return []byte("cairn-sse/v1 data key " + scheme) }

// NewMasterKey returns the master key of the 32 bytes key (tests; servers load theirs
// from a file).
func NewMasterKey(key []byte) (*MasterKey, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("sse: a master key is %d bytes, not %d", KeySize, len(key))
	}
	sum := sha256.Sum256(append([]byte("cairn-sse/v1 master key id "), key...))
	return &MasterKey{key: append([]byte(nil), key...), id: hex.EncodeToString(sum[:8])}, nil
}

// ID names the key without revealing it: the first 8 bytes of a SHA-256 of it, in hex.
// Records wrapped with the key carry it; the nodes of a cluster compare it.
func (k *MasterKey) ID() string { return k.id }

// WrapKey wraps an SSE-S3 object's data key.
func (k *MasterKey) WrapKey(dataKey []byte) ([]byte, error) {
	return Wrap(k.key, dataKey, keyAAD("sse-s3"))
}

// UnwrapKey unwraps an SSE-S3 object's data key (ErrAuth: not wrapped with this key).
func (k *MasterKey) UnwrapKey(wrapped []byte) ([]byte, error) {
	return Unwrap(k.key, wrapped, keyAAD("sse-s3"))
}

// WrapLayoutKey wraps the layout key (LayoutKey) of an SSE-C multipart upload, so
// that its completion, which is not given the customer's key, can authenticate the
// object's layout.
func (k *MasterKey) WrapLayoutKey(layoutKey []byte) ([]byte, error) {
	return Wrap(k.key, layoutKey, keyAAD("sse-c layout"))
}

// UnwrapLayoutKey unwraps a key WrapLayoutKey wrapped (ErrAuth: not wrapped with this
// key).
func (k *MasterKey) UnwrapLayoutKey(wrapped []byte) ([]byte, error) {
	return Unwrap(k.key, wrapped, keyAAD("sse-c layout"))
}

// WrapCustomerKey wraps an SSE-C object's data key with the customer's key.
func WrapCustomerKey(customer, dataKey []byte) ([]byte, error) {
	return Wrap(customer, dataKey, keyAAD("sse-c"))
}

// UnwrapCustomerKey unwraps an SSE-C object's data key (ErrAuth: another customer key).
func UnwrapCustomerKey(customer, wrapped []byte) ([]byte, error) {
	return Unwrap(customer, wrapped, keyAAD("sse-c"))
}

// WrapCustomerKeyBound wraps an SSE-C object's data key with the customer's key as
// WrapCustomerKey does, and binds to it that the object's layout is authenticated
// (format 2: every SSE-C object but a multipart one completed on a server without a
// master key by a completion not given the customer's key).
// That cannot be undone without the customer's key: whoever writes the store cannot
// strip an object's layout MAC and pass it for one that never had any.
func WrapCustomerKeyBound(customer, dataKey []byte) ([]byte, error) {
	return Wrap(customer, dataKey, keyAAD("sse-c layout-bound"))
}

// UnwrapCustomerKeyAny unwraps an SSE-C data key wrapped by WrapCustomerKey or
// WrapCustomerKeyBound, and says whether it was bound (ErrAuth: another customer key).
func UnwrapCustomerKeyAny(customer, wrapped []byte) (key []byte, bound bool, err error) {
	if key, err = Unwrap(customer, wrapped, keyAAD("sse-c layout-bound")); err == nil {
		return key, true, nil
	}
	key, err = UnwrapCustomerKey(customer, wrapped)
	return key, false, err
}

// LoadMasterKey reads the master key file at path. A file that group or others may
// read or write, or that is not 64 hex digits, is an error that says so.
func LoadMasterKey(path string) (*MasterKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("sse: master key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("sse: master key %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("sse: master key %s has mode %#o: it must be readable by its owner only (chmod 600 %s)", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sse: master key: %w", err)
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	key, err := hex.DecodeString(text)
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("sse: master key %s is malformed: it must hold %d hex digits (a %d-byte key) and nothing else", path, 2*KeySize, KeySize)
	}
	return NewMasterKey(key)
}

// LoadOrCreateMasterKey reads the master key file at path, creating it (mode 0600,
// a new random key) when absent; created says it did. The file appears whole or not
// at all: it is written and synced under a temporary name, then linked to path (which
// fails, and the winner's key is read, if another process created it meanwhile).
func LoadOrCreateMasterKey(path string) (k *MasterKey, created bool, err error) {
	if _, err := os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		k, err := LoadMasterKey(path)
		return k, false, err
	}
	key := NewKey()
	tmp := fmt.Sprintf("%s.tmp-%x", path, random(8))
	if err := writeSynced(tmp, hex.EncodeToString(key)+"\n"); err != nil {
		return nil, false, fmt.Errorf("sse: create master key: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		k, err := LoadMasterKey(path)
		return k, false, err
	} else if err != nil {
		return nil, false, fmt.Errorf("sse: create master key: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the new name durable; failing only risks a new key at next start
		d.Close()
	}
	k, err = NewMasterKey(key)
	return k, true, err
}

// writeSynced creates the file name (mode 0600, not existing before) with text, synced.
func writeSynced(name, text string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
	}
	return err
}
