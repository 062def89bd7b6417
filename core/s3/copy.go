package s3

import (
	"context"
	"io"
	"sync"
)

// CopyInput describes a copy: the conditions on the source and what the new object
// keeps of it.
type CopyInput struct {
	// Check, if set, is called with the source's manifest before any data moves (the
	// conditional copy headers); its error ends the copy.
	Check func(*Manifest) error
	// ReplaceMeta takes the content type, metadata and headers from In instead of the
	// source (metadata directive REPLACE).
	ReplaceMeta bool
	// ReplaceTags gives the new object In.Tags instead of the source's tags (tagging
	// directive REPLACE).
	ReplaceTags bool
	// In gives the new object's ACL (ACL or Canned) and, with ReplaceMeta, its content
	// type, metadata and headers. Its Body, Size and MD5 are ignored; its SSE is the
	// new object's encryption.
	In PutInput
	// SourceKey is the SSE-C key of the source (nil: none given).
	SourceKey *CustomerKey
	// SourceVersionID, when set, is the version of the source to copy (s3:GetObjectVersion).
	SourceVersionID string
}

// CopyObject copies srcBucket/srcKey (READ on the source) to dstBucket/dstKey (WRITE on
// the destination bucket). The data streams from a consistent view of the source into
// new chunks, a chunk at a time: nothing is buffered whole, and the source may change
// meanwhile without affecting the copy. Copying an object onto itself must change its
// metadata (InvalidRequest otherwise).
func (s *Service) CopyObject(ctx context.Context, r Requester, srcBucket, srcKey, dstBucket, dstKey string, ci CopyInput) (*Manifest, error) {
	if err := checkNewKey(dstKey); err != nil {
		return nil, err
	}
	src, err := s.openObject(ctx, r, srcBucket, srcKey, ci.SourceVersionID, PermRead)
	if err != nil {
		return nil, copySourceError(err)
	}
	defer src.Close()
	if err := src.Unseal(ci.SourceKey); err != nil {
		return nil, err
	}
	m := src.Manifest
	if ci.Check != nil {
		if err := ci.Check(m); err != nil {
			return nil, err
		}
	}
	if srcBucket == dstBucket && srcKey == dstKey && !ci.ReplaceMeta && !ci.In.SSE.requested() && ci.SourceVersionID == "" {
		return nil, Errorf(InvalidRequest, "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
	}
	in := ci.In
	if !ci.ReplaceMeta {
		in.ContentType, in.Meta, in.Headers = m.ContentType, m.Meta, m.Headers
	}
	if !ci.ReplaceTags {
		in.Tags, in.HasTags = m.Tags, false
	}
	in.MD5 = nil
	in.Size = m.Size
	var out *Manifest
	err = streamFrom(ctx, src, 0, m.Size, func(body io.Reader) error {
		in.Body = body
		var err error
		out, err = s.PutObject(ctx, r, dstBucket, dstKey, in)
		return err
	})
	return out, err
}

// CopyPart stores part n of an upload from bytes [off, off+length) of the source
// object's version srcVersion ("": the current one; READ on the source, and
// s3:GetObjectVersion for a version named, as CopyObject); length < 0 copies the whole
// object. A range outside the source is InvalidArgument (as AWS answers). keys are
// the SSE-C keys of the source and the upload.
func (s *Service) CopyPart(ctx context.Context, r Requester, srcBucket, srcKey, srcVersion, bucket, key, uploadID string, n int,
	off, length int64, check func(*Manifest) error, keys CopyKeys) (*PartInfo, error) {
	src, err := s.openObject(ctx, r, srcBucket, srcKey, srcVersion, PermRead)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if err := src.Unseal(keys.Source); err != nil {
		return nil, err
	}
	m := src.Manifest
	if check != nil {
		if err := check(m); err != nil {
			return nil, err
		}
	}
	if length < 0 {
		off, length = 0, m.Size
	}
	if off < 0 || off > m.Size || length > m.Size-off {
		return nil, Errorf(InvalidArgument, "Range specified is not valid for source object of size: %d", m.Size)
	}
	var p *PartInfo
	err = streamFrom(ctx, src, off, length, func(body io.Reader) error {
		var err error
		p, err = s.PutPart(ctx, r, bucket, key, uploadID, n, PutInput{Body: body, Size: length, SSE: SSERequest{Customer: keys.Dest}})
		return err
	})
	return p, err
}

// streamFrom runs consume with a reader of the source's bytes [off, off+n), produced by
// a goroutine that consume's return ends (the reader is closed then, so the producer
// never blocks on a consumer that stopped reading).
func streamFrom(ctx context.Context, src *Object, off, n int64, consume func(io.Reader) error) error {
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pw.CloseWithError(src.WriteRange(ctx, pw, off, n))
	}()
	err := consume(pr)
	pr.CloseWithError(io.ErrClosedPipe)
	wg.Wait()
	return err
}
