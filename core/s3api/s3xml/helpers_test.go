package s3xml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// Canonical ids of the fake users.
const (
	idAlice = "8d6f0519a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a0fd6b"
	idBob   = "b0b0000000000000000000000000000000000000000000000000000000000b0b"
)

// fakeResolver knows alice and bob; "boom" ids and addresses fail with an internal
// error, "nosuch" ones with s3types.NoSuchUser.
type fakeResolver struct {
	byID    map[string]s3types.Owner
	byEmail map[string]s3types.Owner
	calls   int
}

func newResolver() *fakeResolver {
	alice := s3types.Owner{ID: idAlice, DisplayName: "alice"}
	bob := s3types.Owner{ID: idBob, DisplayName: "bob"}
	return &fakeResolver{
		byID:    map[string]s3types.Owner{idAlice: alice, idBob: bob},
		byEmail: map[string]s3types.Owner{"alice@example.com": alice, "bob@example.com": bob},
	}
}

var errBoom = errors.New("backend down")

func (r *fakeResolver) UserByID(id string) (s3types.Owner, error) {
	r.calls++
	switch id {
	case "boom":
		return s3types.Owner{}, errBoom
	case "nosuch":
		return s3types.Owner{}, s3types.Errorf(s3types.NoSuchUser, "The specified user does not exist")
	}
	if o, ok := r.byID[id]; ok {
		return o, nil
	}
	return s3types.Owner{}, fmt.Errorf("lookup %q: %w", id, ErrUnknownUser)
}

func (r *fakeResolver) UserByEmail(email string) (s3types.Owner, error) {
	r.calls++
	switch email {
	case "boom@example.com":
		return s3types.Owner{}, errBoom
	case "nosuch@example.com":
		return s3types.Owner{}, s3types.Errorf(s3types.NoSuchUser, "The specified user does not exist")
	}
	if o, ok := r.byEmail[email]; ok {
		return o, nil
	}
	return s3types.Owner{}, ErrUnknownUser
}

// wellFormed fails the test when doc is not a single well-formed XML element after the
// declaration.
func wellFormed(t testing.TB, doc []byte) {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte(Header)) {
		t.Fatalf("document does not start with the declaration: %q", doc)
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, doc)
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 || depth != 0 {
		t.Fatalf("want one root element, got %d (depth %d)\n%s", roots, depth, doc)
	}
}

// wantCode fails the test unless err is an *s3types.Error with the code (and, if msg is not
// empty, the message).
func wantCode(t testing.TB, err error, code s3types.Code, msg string) {
	t.Helper()
	e := s3types.AsError(err)
	if e == nil {
		t.Fatalf("err = %v (%T), want *s3types.Error %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%q), want %s", e.Code, e.Message, code)
	}
	if msg != "" && e.Message != msg {
		t.Fatalf("message = %q, want %q", e.Message, msg)
	}
}

// lines joins golden fragments (written one per line for reading) into one string.
func lines(parts ...string) string { return strings.Join(parts, "") }
