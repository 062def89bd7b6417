package wire

import "github.com/cairnkv/cairn/core"

// SiblingsText returns the text/plain body of a 300 response: "Siblings:\n" followed by
// each vtag and "\n".
func SiblingsText(vtags []string) []byte {
	n := len("Siblings:\n")
	for _, v := range vtags {
		n += len(v) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, "Siblings:\n"...)
	for _, v := range vtags {
		b = append(b, v...)
		b = append(b, '\n')
	}
	return b
}

// SiblingHeaders returns the header lines of one value inside a multipart body (a 300
// response's sibling part, or a link-walk object after its X-*-Vclock and Location
// lines), in the reference order:
//
//	Content-Type: <type>[; charset=X]
//	Content-Encoding: X                 (when stored)
//	Link: </riak/b>; rel="up"[, <user links>]
//	Etag: <vtag>                        (unquoted)
//	Last-Modified: <RFC 1123 date>
//	X-Riak-Deleted: true                (tombstones only)
//	X-Riak-Meta-<Name>: <value>         (each, in stored order)
//	x-riak-index-<field>: <value>       (one line per value, sorted)
//
// typ and bucket are the object's; api and d decide the link and header forms.
func SiblingHeaders(s *core.Sibling, api API, d Dialect, typ, bucket string) [][2]string {
	h := make([][2]string, 0, 5+len(s.Meta)+len(s.Indexes))
	h = append(h, [2]string{"Content-Type", FormatContentType(s.ContentType, s.Charset)})
	if s.Encoding != "" {
		h = append(h, [2]string{"Content-Encoding", s.Encoding})
	}
	h = append(h,
		[2]string{"Link", FormatPartLinks(s.Links, api, d, typ, bucket)},
		[2]string{"Etag", s.VTag},
		[2]string{"Last-Modified", FormatHTTPDate(s.LastModified)},
	)
	if s.Deleted {
		h = append(h, [2]string{d.Header("Deleted"), "true"})
	}
	for _, m := range s.Meta {
		h = append(h, [2]string{MetaHeaderName(d, m.Name), m.Value})
	}
	return append(h, IndexPartHeaders(s.Indexes, d)...)
}
