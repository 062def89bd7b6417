package s3xml

// MarshalError renders an error body (no namespace, as AWS sends it):
//
//	<Error><Code/><Message/><Resource/><RequestId/>…extra…</Error>
//
// Each extra pair is an element name and its text, written after RequestId in the
// order given (BucketName, Key, ArgumentName, ArgumentValue, HostId, …); the names are
// the caller's constants and are not checked.
func MarshalError(code, message, resource, requestID string, extra ...[2]string) []byte {
	w := NewWriter("Error", false, 0)
	w.Elem("Code", code)
	w.Elem("Message", message)
	w.Elem("Resource", resource)
	w.Elem("RequestId", requestID)
	for _, e := range extra {
		w.Elem(e[0], e[1])
	}
	return w.Bytes()
}
