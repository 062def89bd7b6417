package s3

import "strings"

// WriteConditions are a write's preconditions on the key's current version (S3's
// conditional writes, on PUT and on multipart completion): IfNoneMatch "*" writes only
// if the key has no current version; IfMatch writes only over the current version
// with one of its ETags (ETagMatches; "*": any current version). They are checked in the
// write's own conditional commit, so that of racing writers exactly the ones whose
// condition held when they committed succeed: of 32 racing creates, one.
type WriteConditions struct {
	IfMatch, IfNoneMatch string
}

// validate refuses what S3 does not implement: If-None-Match on a write takes "*" only.
func (c WriteConditions) validate() error {
	if c.IfNoneMatch != "" && c.IfNoneMatch != "*" {
		return Errorf(NotImplemented, "A header you provided implies functionality that is not implemented")
	}
	return nil
}

// check evaluates c against the key's current version old (nil: none): 412
// PreconditionFailed when a condition does not hold, 404 NoSuchKey for If-Match on a
// key without a current version, as S3 answers.
func (c WriteConditions) check(old *Manifest) error {
	if c.IfNoneMatch == "*" && old != nil {
		return errPreconditionFailed
	}
	if c.IfMatch == "" {
		return nil
	}
	if old == nil {
		return Errorf(NoSuchKey, "The specified key does not exist.")
	}
	if !etagMatch(c.IfMatch, old.ETag, false) {
		return errPreconditionFailed
	}
	return nil
}

// ETagMatches reports whether a list of entity tags (the read conditions If-Match,
// If-None-Match and their copy-source forms: comma-separated, each quoted or not,
// weak ones compared weakly) or "*" names etag (unquoted).
func ETagMatches(list, etag string) bool { return etagMatch(list, etag, true) }

// etagMatch is ETagMatches; without weak, weak entity tags never match (RFC 9110's
// strong comparison, which a write's If-Match uses).
func etagMatch(list, etag string, weak bool) bool {
	for t := range strings.SplitSeq(list, ",") {
		t = strings.TrimSpace(t)
		if w, ok := strings.CutPrefix(t, "W/"); ok {
			if !weak {
				continue
			}
			t = w
		}
		if t == "*" || strings.Trim(t, `"`) == etag {
			return true
		}
	}
	return false
}

// errPreconditionFailed is S3's answer to a write whose condition did not hold.
var errPreconditionFailed = Errorf(PreconditionFailed, "At least one of the pre-conditions you specified did not hold")
