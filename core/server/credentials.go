package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// AdminCredentialsFile is the file, in the data directory, that holds the admin
// credential created at first start.
const AdminCredentialsFile = "admin-credentials.json"

// Credential is an access key: the admin credential guards /admin on the key-value
// interface and is the object-storage interface's admin user.
type Credential struct {
	KeyID     string `json:"key_id"`
	KeySecret string `json:"key_secret"`
}

// Matches reports whether id and secret are this credential, in constant time.
func (c Credential) Matches(id, secret string) bool {
	a := subtle.ConstantTimeCompare([]byte(id), []byte(c.KeyID))
	b := subtle.ConstantTimeCompare([]byte(secret), []byte(c.KeySecret))
	return a&b == 1 && c.KeyID != ""
}

// loadOrCreateCredential reads dir/admin-credentials.json, creating it (mode 0600) with
// a new random credential when it does not exist.
func loadOrCreateCredential(dir string) (Credential, error) {
	path := filepath.Join(dir, AdminCredentialsFile)
	b, err := os.ReadFile(path)
	if err == nil {
		var c Credential
		if err := json.Unmarshal(b, &c); err != nil || c.KeyID == "" || c.KeySecret == "" {
			return Credential{}, fmt.Errorf("server: %s is not a credential file (want {\"key_id\":..,\"key_secret\":..})", path)
		}
		return c, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Credential{}, fmt.Errorf("server: read admin credential: %w", err)
	}
	c := Credential{KeyID: randomString(20, keyIDAlphabet), KeySecret: randomString(40, secretAlphabet)}
	b, _ = json.MarshalIndent(c, "", "  ")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Credential{}, fmt.Errorf("server: create admin credential: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return Credential{}, fmt.Errorf("server: write admin credential: %w", err)
	}
	return c, nil
}

// Alphabets of generated credentials, in the style of S3 access keys.
const (
	keyIDAlphabet  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// randomString returns n characters drawn uniformly from alphabet (len ≤ 256).
func randomString(n int, alphabet string) string {
	out := make([]byte, 0, n)
	limit := 256 - 256%len(alphabet)
	var buf [64]byte
	for len(out) < n {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}
