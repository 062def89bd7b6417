package s3xml

import (
	"encoding/xml"
	"strconv"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// MaxLifecycleBody bounds the body of PUT ?lifecycle: 1000 rules (AWS's limit) of
// about a kilobyte each.
const MaxLifecycleBody = 1 << 20

// lifecycleDoc is a LifecycleConfiguration request body. Elements are pointers so that
// a missing element differs from an empty one; numbers are read as text so that one
// that is not a number is MalformedXML rather than a decoder error.
type lifecycleDoc struct {
	XMLName xml.Name
	Rules   []ruleDoc `xml:"Rule"`
}

type ruleDoc struct {
	ID         *string        `xml:"ID"`
	Status     *string        `xml:"Status"`
	Prefix     *string        `xml:"Prefix"`
	Filter     *filterDoc     `xml:"Filter"`
	Expiration *expirationDoc `xml:"Expiration"`
	Noncurrent *struct {
		Days  *string `xml:"NoncurrentDays"`
		Newer *string `xml:"NewerNoncurrentVersions"`
	} `xml:"NoncurrentVersionExpiration"`
	Abort *struct {
		Days *string `xml:"DaysAfterInitiation"`
	} `xml:"AbortIncompleteMultipartUpload"`
	Transitions           []struct{} `xml:"Transition"`
	NoncurrentTransitions []struct{} `xml:"NoncurrentVersionTransition"`
}

type filterDoc struct {
	Prefix *string  `xml:"Prefix"`
	Tags   []tagDoc `xml:"Tag"`
	Gt     *string  `xml:"ObjectSizeGreaterThan"`
	Lt     *string  `xml:"ObjectSizeLessThan"`
	And    []struct {
		Prefix *string  `xml:"Prefix"`
		Tags   []tagDoc `xml:"Tag"`
		Gt     *string  `xml:"ObjectSizeGreaterThan"`
		Lt     *string  `xml:"ObjectSizeLessThan"`
	} `xml:"And"`
}

type tagDoc struct {
	Key   *string `xml:"Key"`
	Value *string `xml:"Value"`
}

type expirationDoc struct {
	Days         *string `xml:"Days"`
	Date         *string `xml:"Date"`
	DeleteMarker *string `xml:"ExpiredObjectDeleteMarker"`
}

// errTransition answers a rule with a transition: Cairn has one storage class, so a
// rule that asks to move data to another would silently do nothing.
func errTransition() error {
	return &s3types.Error{Code: s3types.NotImplemented,
		Message: "Lifecycle transitions are not implemented: Cairn has one storage class (STANDARD)"}
}

// ParseLifecycle reads the body of PUT ?lifecycle,
//
//	<LifecycleConfiguration xmlns="…"><Rule><ID/><Filter>…</Filter><Status/>
//	  <Expiration>…</Expiration>…</Rule>…</LifecycleConfiguration>
//
// into a configuration, rules in document order. What the schema refuses is a 400
// MalformedXML *s3types.Error: another root, no rule, a Status other than Enabled or
// Disabled, both a rule-level Prefix and a Filter, a Filter with more than one
// condition outside And, a Tag without Key, an Expiration with none or more than one
// of Days, Date and ExpiredObjectDeleteMarker, an action without its number, a number
// that is not an integer, a Date that is not ISO 8601. A Transition or
// NoncurrentVersionTransition is 501 NotImplemented. Limits and ranges (counts, ID
// lengths, positive days, midnight dates) are the service's to check. The caller
// bounds the body (MaxLifecycleBody).
func ParseLifecycle(body []byte) (*s3types.Lifecycle, error) {
	var doc lifecycleDoc
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "LifecycleConfiguration" || len(doc.Rules) == 0 {
		return nil, errMalformedXML()
	}
	lc := &s3types.Lifecycle{Rules: make([]s3types.LifecycleRule, 0, len(doc.Rules))}
	for i := range doc.Rules {
		r, err := parseRule(&doc.Rules[i])
		if err != nil {
			return nil, err
		}
		lc.Rules = append(lc.Rules, r)
	}
	return lc, nil
}

// parseRule reads one Rule element (see ParseLifecycle).
func parseRule(d *ruleDoc) (s3types.LifecycleRule, error) {
	var r s3types.LifecycleRule
	if len(d.Transitions) > 0 || len(d.NoncurrentTransitions) > 0 {
		return r, errTransition()
	}
	if d.ID != nil {
		r.ID = *d.ID
	}
	switch {
	case d.Status == nil:
		return r, errMalformedXML()
	case *d.Status == "Enabled":
		r.Enabled = true
	case *d.Status != "Disabled":
		return r, errMalformedXML()
	}
	var err error
	switch {
	case d.Prefix != nil && d.Filter != nil:
		return r, errMalformedXML()
	case d.Prefix != nil:
		r.Filter = s3types.LifecycleFilter{Form: s3types.FilterLegacyPrefix, Prefix: *d.Prefix}
	case d.Filter != nil:
		if r.Filter, err = parseFilter(d.Filter); err != nil {
			return r, err
		}
	}
	if d.Expiration != nil {
		if r.Expiration, err = parseExpiration(d.Expiration); err != nil {
			return r, err
		}
	}
	if n := d.Noncurrent; n != nil {
		days, ok := parseInt(n.Days)
		if !ok {
			return r, errMalformedXML()
		}
		r.NoncurrentExpiration = &s3types.NoncurrentExpiration{NoncurrentDays: days}
		if n.Newer != nil {
			if r.NoncurrentExpiration.NewerVersions, ok = parseInt(n.Newer); !ok {
				return r, errMalformedXML()
			}
		}
	}
	if d.Abort != nil {
		days, ok := parseInt(d.Abort.Days)
		if !ok {
			return r, errMalformedXML()
		}
		r.AbortUpload = &s3types.AbortIncompleteUpload{DaysAfterInitiation: days}
	}
	return r, nil
}

// parseFilter reads a Filter: at most one condition, or an And of several.
func parseFilter(f *filterDoc) (s3types.LifecycleFilter, error) {
	out := s3types.LifecycleFilter{Form: s3types.FilterSingle}
	n := len(f.Tags) + len(f.And)
	for _, p := range []*string{f.Prefix, f.Gt, f.Lt} {
		if p != nil {
			n++
		}
	}
	if n > 1 {
		return out, errMalformedXML()
	}
	prefix, tags, gt, lt := f.Prefix, f.Tags, f.Gt, f.Lt
	if len(f.And) == 1 {
		a := f.And[0]
		out.Form = s3types.FilterAnd
		prefix, tags, gt, lt = a.Prefix, a.Tags, a.Gt, a.Lt
	}
	if prefix != nil {
		out.Prefix, out.HasPrefix = *prefix, true
	}
	for _, t := range tags {
		if t.Key == nil {
			return out, errMalformedXML()
		}
		tag := s3types.Tag{Key: *t.Key}
		if t.Value != nil {
			tag.Value = *t.Value
		}
		out.Tags = append(out.Tags, tag)
	}
	var ok bool
	if out.SizeGreaterThan, ok = parseSize(gt); !ok {
		return out, errMalformedXML()
	}
	if out.SizeLessThan, ok = parseSize(lt); !ok {
		return out, errMalformedXML()
	}
	return out, nil
}

// parseExpiration reads an Expiration: exactly one of Days, Date and
// ExpiredObjectDeleteMarker.
func parseExpiration(e *expirationDoc) (*s3types.LifecycleExpiration, error) {
	n := 0
	for _, p := range []*string{e.Days, e.Date, e.DeleteMarker} {
		if p != nil {
			n++
		}
	}
	if n != 1 {
		return nil, errMalformedXML()
	}
	out := &s3types.LifecycleExpiration{}
	var ok bool
	switch {
	case e.Days != nil:
		out.Days, ok = parseInt(e.Days)
	case e.Date != nil:
		out.Date, ok = parseDate(trim(*e.Date))
	default:
		var v bool
		switch trim(*e.DeleteMarker) {
		case "true":
			v, ok = true, true
		case "false":
			ok = true
		}
		out.DeleteMarker = &v
	}
	if !ok {
		return nil, errMalformedXML()
	}
	return out, nil
}

// parseInt reads a present xsd:int element (32 bits).
func parseInt(p *string) (int, bool) {
	if p == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(trim(*p), 10, 32)
	return int(v), err == nil
}

// parseSize reads an optional size element (xsd:long); nil for an absent one.
func parseSize(p *string) (*int64, bool) {
	if p == nil {
		return nil, true
	}
	v, err := strconv.ParseInt(trim(*p), 10, 64)
	return &v, err == nil
}

// dateLayouts are the ISO 8601 forms a lifecycle Date is accepted in.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"}

// parseDate reads an ISO 8601 date or date-time (UTC when no zone is given).
func parseDate(s string) (time.Time, bool) {
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			t, err = InRange(t.UTC())
			return t, err == nil
		}
	}
	return time.Time{}, false
}

// MarshalLifecycle renders the answer of GET ?lifecycle: the rules as stored, each
// filter in the form its PUT used.
func MarshalLifecycle(lc *s3types.Lifecycle) []byte {
	w := NewWriter("LifecycleConfiguration", true, 256*len(lc.Rules))
	for i := range lc.Rules {
		r := &lc.Rules[i]
		w.Open("Rule")
		w.Elem("ID", r.ID)
		writeFilter(w, &r.Filter)
		if r.Enabled {
			w.Elem("Status", "Enabled")
		} else {
			w.Elem("Status", "Disabled")
		}
		if e := r.Expiration; e != nil {
			w.Open("Expiration")
			switch {
			case !e.Date.IsZero():
				w.ElemTime("Date", e.Date)
			case e.DeleteMarker != nil:
				w.ElemBool("ExpiredObjectDeleteMarker", *e.DeleteMarker)
			default:
				w.ElemInt("Days", int64(e.Days))
			}
			w.Close("Expiration")
		}
		if n := r.NoncurrentExpiration; n != nil {
			w.Open("NoncurrentVersionExpiration")
			w.ElemInt("NoncurrentDays", int64(n.NoncurrentDays))
			if n.NewerVersions > 0 {
				w.ElemInt("NewerNoncurrentVersions", int64(n.NewerVersions))
			}
			w.Close("NoncurrentVersionExpiration")
		}
		if a := r.AbortUpload; a != nil {
			w.Open("AbortIncompleteMultipartUpload")
			w.ElemInt("DaysAfterInitiation", int64(a.DaysAfterInitiation))
			w.Close("AbortIncompleteMultipartUpload")
		}
		w.Close("Rule")
	}
	return w.Bytes()
}

// writeFilter writes a rule's filter in its form: a rule-level Prefix, a Filter with
// its one condition (none: an empty Filter), or a Filter with an And; a Filter's
// Prefix is written when it was given, an empty one too.
func writeFilter(w *Writer, f *s3types.LifecycleFilter) {
	switch f.Form {
	case s3types.FilterNone:
		return
	case s3types.FilterLegacyPrefix:
		w.Elem("Prefix", f.Prefix)
		return
	}
	w.Open("Filter")
	and := f.Form == s3types.FilterAnd
	if and {
		w.Open("And")
	}
	if f.Prefix != "" || f.HasPrefix {
		w.Elem("Prefix", f.Prefix)
	}
	for _, t := range f.Tags {
		w.Open("Tag")
		w.Elem("Key", t.Key)
		w.Elem("Value", t.Value)
		w.Close("Tag")
	}
	if f.SizeGreaterThan != nil {
		w.ElemInt("ObjectSizeGreaterThan", *f.SizeGreaterThan)
	}
	if f.SizeLessThan != nil {
		w.ElemInt("ObjectSizeLessThan", *f.SizeLessThan)
	}
	if and {
		w.Close("And")
	}
	w.Close("Filter")
}
