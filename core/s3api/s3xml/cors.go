package s3xml

import (
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// MaxCORSBody bounds the body of PUT ?cors (AWS's limit on a CORS configuration).
const MaxCORSBody = 64 << 10

// corsDoc is a CORSConfiguration request body.
type corsDoc struct {
	XMLName xml.Name
	Rules   []struct {
		ID             string   `xml:"ID"`
		AllowedOrigins []string `xml:"AllowedOrigin"`
		AllowedMethods []string `xml:"AllowedMethod"`
		AllowedHeaders []string `xml:"AllowedHeader"`
		ExposeHeaders  []string `xml:"ExposeHeader"`
		MaxAgeSeconds  *string  `xml:"MaxAgeSeconds"`
	} `xml:"CORSRule"`
}

// ParseCORS reads the body of PUT ?cors,
//
//	<CORSConfiguration><CORSRule><ID/><AllowedOrigin/>…<AllowedMethod/>…<AllowedHeader/>…
//	<ExposeHeader/>…<MaxAgeSeconds/></CORSRule>…</CORSConfiguration>
//
// into rules in document order, values trimmed of white space. A body that is not
// such a document, or a MaxAgeSeconds that is not an integer, is 400 MalformedXML; the
// rules' limits are core/s3's CheckCORSRules's. The caller bounds the body (MaxCORSBody).
func ParseCORS(body []byte) ([]s3types.CORSRule, error) {
	var doc corsDoc
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "CORSConfiguration" {
		return nil, errMalformedXML()
	}
	out := make([]s3types.CORSRule, 0, len(doc.Rules))
	for _, d := range doc.Rules {
		r := s3types.CORSRule{ID: trim(d.ID), AllowedOrigins: trimAll(d.AllowedOrigins), AllowedMethods: trimAll(d.AllowedMethods),
			AllowedHeaders: trimAll(d.AllowedHeaders), ExposeHeaders: trimAll(d.ExposeHeaders)}
		if d.MaxAgeSeconds != nil {
			n, err := strconv.Atoi(trim(*d.MaxAgeSeconds))
			if err != nil {
				return nil, errMalformedXML()
			}
			r.MaxAgeSeconds, r.HasMaxAge = n, true
		}
		out = append(out, r)
	}
	return out, nil
}

// trimAll trims every value of vs (nil stays nil).
func trimAll(vs []string) []string {
	for i, v := range vs {
		vs[i] = strings.Trim(v, " \t\r\n")
	}
	return vs
}

// MarshalCORS renders the answer of GET ?cors.
func MarshalCORS(rules []s3types.CORSRule) []byte {
	w := NewWriter("CORSConfiguration", true, 256*len(rules))
	for _, r := range rules {
		w.Open("CORSRule")
		if r.ID != "" {
			w.Elem("ID", r.ID)
		}
		elems(w, "AllowedHeader", r.AllowedHeaders)
		elems(w, "AllowedMethod", r.AllowedMethods)
		elems(w, "AllowedOrigin", r.AllowedOrigins)
		elems(w, "ExposeHeader", r.ExposeHeaders)
		if r.HasMaxAge {
			w.ElemInt("MaxAgeSeconds", int64(r.MaxAgeSeconds))
		}
		w.Close("CORSRule")
	}
	return w.Bytes()
}

// elems writes one element named name per value.
func elems(w *Writer, name string, vs []string) {
	for _, v := range vs {
		w.Elem(name, v)
	}
}
