package s3xml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// MaxGrants bounds the grants of one access control policy, from a body or from grant
// headers; more is an error.
const MaxGrants = 100

// The grantee types a request may name in xsi:type. Email grants are resolved to
// [s3types.GranteeCanonicalUser]; both spellings are accepted ("AmazonCustomerByEmail" is
// what clients send, "CustomerByEmail" what the interface description shows).
const (
	GranteeAmazonCustomerByEmail = "AmazonCustomerByEmail"
	GranteeCustomerByEmail       = "CustomerByEmail"
)

// ErrUnknownUser is what a [Resolver] returns (possibly wrapped) for a canonical id or
// an e-mail address that names no user.
var ErrUnknownUser = errors.New("s3xml: unknown user")

// Resolver looks up the users grants name.
//
// A lookup of a user that does not exist must fail with an error for which
// errors.Is(err, ErrUnknownUser) holds, or with an *s3types.Error of code s3types.NoSuchUser
// (what s3.Service answers); ParseACL and ParseGrantHeaders turn those into the S3
// error of the grant (InvalidArgument for an id, UnresolvableGrantByEmailAddress for an
// e-mail address). Any other error is returned wrapped, as an internal failure.
type Resolver interface {
	// UserByID returns the owner (canonical id and display name) with the id.
	UserByID(id string) (s3types.Owner, error)
	// UserByEmail returns the owner with the e-mail address.
	UserByEmail(email string) (s3types.Owner, error)
}

// The fixed error texts of ACL parsing (those AWS sends).
const (
	msgMalformedACL = "The XML you provided was not well-formed or did not validate against our published schema"
	msgInvalidID    = "Invalid id"
	msgUnresolvable = "The e-mail address you provided does not match any account on record."
)

func errMalformedACL() error {
	return &s3types.Error{Code: s3types.MalformedACLError, Message: msgMalformedACL}
}

// MarshalACL renders an access control policy as the AccessControlPolicy document of
// GET ?acl:
//
//	<AccessControlPolicy xmlns="…"><Owner><ID/><DisplayName/></Owner><AccessControlList>
//	<Grant><Grantee xmlns:xsi="…" xsi:type="CanonicalUser"><ID/><DisplayName/></Grantee>
//	<Permission/></Grant>…</AccessControlList></AccessControlPolicy>
//
// (on one line). A Group grantee is written with its URI. A grantee of another type is
// written as a Group when it has a URI and as a CanonicalUser otherwise.
func MarshalACL(acl s3types.ACL) []byte {
	w := NewWriter("AccessControlPolicy", true, 512+300*len(acl.Grants))
	writeOwner(w, acl.Owner)
	w.Open("AccessControlList")
	for _, g := range acl.Grants {
		w.Open("Grant")
		if g.Grantee.Type == s3types.GranteeGroup || g.Grantee.Type != s3types.GranteeCanonicalUser && g.Grantee.URI != "" {
			w.Raw(`<Grantee xmlns:xsi="` + XSINamespace + `" xsi:type="Group">`)
			w.Elem("URI", g.Grantee.URI)
		} else {
			w.Raw(`<Grantee xmlns:xsi="` + XSINamespace + `" xsi:type="CanonicalUser">`)
			w.Elem("ID", g.Grantee.ID)
			w.Elem("DisplayName", g.Grantee.DisplayName)
		}
		w.Close("Grantee")
		w.Elem("Permission", string(g.Permission))
		w.Close("Grant")
	}
	w.Close("AccessControlList")
	return w.Bytes()
}

func writeOwner(w *Writer, o s3types.Owner) {
	w.Open("Owner")
	w.Elem("ID", o.ID)
	w.Elem("DisplayName", o.DisplayName)
	w.Close("Owner")
}

// The shape of an AccessControlPolicy request body. Fields without a namespace in
// their tags match elements of any namespace.
type aclDoc struct {
	XMLName xml.Name
	Owner   *ownerDoc  `xml:"Owner"`
	Grants  []grantDoc `xml:"AccessControlList>Grant"`
}

type ownerDoc struct {
	ID          *string `xml:"ID"`
	DisplayName string  `xml:"DisplayName"`
}

type grantDoc struct {
	Grantee    *granteeDoc `xml:"Grantee"`
	Permission *string     `xml:"Permission"`
}

type granteeDoc struct {
	Attrs        []xml.Attr `xml:",any,attr"`
	ID           *string    `xml:"ID"`
	EmailAddress *string    `xml:"EmailAddress"`
	URI          *string    `xml:"URI"`
}

// granteeType returns the grantee's type attribute: xsi:type under any prefix bound to
// the XML Schema instance namespace (or the literal, undeclared prefix "xsi"), else an
// unprefixed type attribute; "" when there is none.
func (g *granteeDoc) granteeType() string {
	bare := ""
	for _, a := range g.Attrs {
		if a.Name.Local != "type" {
			continue
		}
		switch a.Name.Space {
		case XSINamespace, "xsi":
			return trim(a.Value)
		case "":
			bare = trim(a.Value)
		}
	}
	return bare
}

// ParseACL parses an AccessControlPolicy request body (PUT ?acl) and resolves its
// grantees with res: e-mail grants become CanonicalUser grants with the user's id and
// display name, canonical-user grants take the display name res gives (the one in the
// request is ignored). Grants keep their order. The Owner is returned as the body gives
// it (trimmed): the caller checks that its ID is the resource owner's and should store
// the resource's own owner.
//
// Errors are *s3types.Error: MalformedACLError for a body that is not XML, whose root is not
// AccessControlPolicy, that has no Owner (or an Owner without ID), more than
// [MaxGrants] grants, a grant without grantee or permission, an unknown permission, a
// grantee without (or with an unknown) type, a missing ID, EmailAddress or URI, or a
// URI that is not one of the predefined groups; InvalidArgument "Invalid id" for an
// unknown canonical id; UnresolvableGrantByEmailAddress for an unknown e-mail address.
// Resolver failures other than an unknown user are returned wrapped.
func ParseACL(body []byte, res Resolver) (s3types.ACL, error) {
	var doc aclDoc
	if err := decodeStrict(body, &doc); err != nil || doc.XMLName.Local != "AccessControlPolicy" {
		return s3types.ACL{}, errMalformedACL()
	}
	if doc.Owner == nil || doc.Owner.ID == nil || trim(*doc.Owner.ID) == "" {
		return s3types.ACL{}, errMalformedACL()
	}
	if len(doc.Grants) > MaxGrants {
		return s3types.ACL{}, errMalformedACL()
	}
	acl := s3types.ACL{
		Owner:  s3types.Owner{ID: trim(*doc.Owner.ID), DisplayName: trim(doc.Owner.DisplayName)},
		Grants: make([]s3types.Grant, 0, len(doc.Grants)),
	}
	// Validate the whole document before the first lookup, so a malformed body is
	// always MalformedACLError whatever its grantees.
	for _, g := range doc.Grants {
		if g.Grantee == nil || g.Permission == nil || !s3types.ValidPermission(s3types.Permission(trim(*g.Permission))) {
			return s3types.ACL{}, errMalformedACL()
		}
		var field *string
		switch t := g.Grantee.granteeType(); {
		case strings.EqualFold(t, s3types.GranteeCanonicalUser):
			field = g.Grantee.ID
		case strings.EqualFold(t, GranteeAmazonCustomerByEmail), strings.EqualFold(t, GranteeCustomerByEmail):
			field = g.Grantee.EmailAddress
		case strings.EqualFold(t, s3types.GranteeGroup):
			if g.Grantee.URI == nil || !s3types.ValidGroup(trim(*g.Grantee.URI)) {
				return s3types.ACL{}, errMalformedACL()
			}
			field = g.Grantee.URI
		default:
			return s3types.ACL{}, errMalformedACL()
		}
		if field == nil || trim(*field) == "" {
			return s3types.ACL{}, errMalformedACL()
		}
	}
	for _, g := range doc.Grants {
		perm := s3types.Permission(trim(*g.Permission))
		var grantee s3types.Grantee
		var err error
		switch t := g.Grantee.granteeType(); {
		case strings.EqualFold(t, s3types.GranteeCanonicalUser):
			grantee, err = resolveID(res, trim(*g.Grantee.ID))
		case strings.EqualFold(t, s3types.GranteeGroup):
			grantee = s3types.Grantee{Type: s3types.GranteeGroup, URI: trim(*g.Grantee.URI)}
		default:
			grantee, err = resolveEmail(res, trim(*g.Grantee.EmailAddress))
		}
		if err != nil {
			return s3types.ACL{}, err
		}
		acl.Grants = append(acl.Grants, s3types.Grant{Grantee: grantee, Permission: perm})
	}
	return acl, nil
}

// unknownUser reports whether a resolver error means "no such user".
func unknownUser(err error) bool {
	return errors.Is(err, ErrUnknownUser) || s3types.IsCode(err, s3types.NoSuchUser)
}

// resolveID turns a canonical id into a CanonicalUser grantee with the user's display
// name.
func resolveID(res Resolver, id string) (s3types.Grantee, error) {
	o, err := res.UserByID(id)
	if err != nil {
		if unknownUser(err) {
			return s3types.Grantee{}, &s3types.Error{Code: s3types.InvalidArgument, Message: msgInvalidID}
		}
		return s3types.Grantee{}, fmt.Errorf("s3xml: resolve canonical id %q: %w", id, err)
	}
	return s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: id, DisplayName: o.DisplayName}, nil
}

// resolveEmail turns an e-mail address into a CanonicalUser grantee.
func resolveEmail(res Resolver, email string) (s3types.Grantee, error) {
	o, err := res.UserByEmail(email)
	if err != nil {
		if unknownUser(err) {
			return s3types.Grantee{}, &s3types.Error{Code: s3types.UnresolvableGrantByEmail, Message: msgUnresolvable}
		}
		return s3types.Grantee{}, fmt.Errorf("s3xml: resolve e-mail address %q: %w", email, err)
	}
	if o.ID == "" {
		return s3types.Grantee{}, fmt.Errorf("s3xml: resolve e-mail address %q: resolver gave no id", email)
	}
	return s3types.Grantee{Type: s3types.GranteeCanonicalUser, ID: o.ID, DisplayName: o.DisplayName}, nil
}
