package s3xml

// MarshalError renders an error body (no namespace, as AWS sends it):
//
//	<Error><Code/><Message/><Resource/><RequestId/><HostId/>…extra…</Error>
//
// requestID and hostID are the response's request-id and id-2 header values. Each
// extra pair is an element name and its text, written after HostId in the order given
// (BucketName, Key, ArgumentName, ArgumentValue, …); the names are the caller's
// constants and are not checked.
func MarshalError(code, message, resource, requestID, hostID string, extra ...[2]string) []byte {
	w := NewWriter("Error", false, 0)
	w.Elem("Code", code)
	w.Elem("Message", message)
	w.Elem("Resource", resource)
	w.Elem("RequestId", requestID)
	w.Elem("HostId", hostID)
	for _, e := range extra {
		w.Elem(e[0], e[1])
	}
	return w.Bytes()
}
