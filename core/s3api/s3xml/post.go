package s3xml

// MarshalPostResponse renders the answer of a POST object upload asked for with
// success_action_status 201:
//
//	<PostResponse><Location/><Bucket/><Key/><ETag>"…"</ETag></PostResponse>
func MarshalPostResponse(location, bucket, key, etag string) []byte {
	return marshalStored("PostResponse", false, location, bucket, key, etag)
}

// marshalStored renders a document that says where an object was stored: root with
// Location, Bucket, Key and ETag.
func marshalStored(root string, withNS bool, location, bucket, key, etag string) []byte {
	w := NewWriter(root, withNS, 256+len(location)+len(bucket)+len(key))
	w.Elem("Location", location)
	w.Elem("Bucket", bucket)
	w.Elem("Key", key)
	w.ElemETag("ETag", etag)
	return w.Bytes()
}
