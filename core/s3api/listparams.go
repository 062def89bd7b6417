package s3api

import (
	"strconv"

	"github.com/cairnkv/cairn/core/s3"
)

// maxKeysParam returns the request's max-keys, at most s3.MaxListKeys (that when
// absent); a value that is not a non-negative integer is 400 InvalidArgument.
func (c *call) maxKeysParam() (int, error) {
	v, ok := c.query["max-keys"]
	if !ok {
		return s3.MaxListKeys, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 0 {
		return 0, s3.Errorf(s3.InvalidArgument, "Provided max-keys not an integer or within integer range")
	}
	return min(n, s3.MaxListKeys), nil
}

// listParams returns the request's max-keys and encoding-type=url (maxKeysParam,
// encodingURL).
func (c *call) listParams() (maxKeys int, encURL bool, err error) {
	if maxKeys, err = c.maxKeysParam(); err != nil {
		return 0, false, err
	}
	encURL, err = c.encodingURL()
	return maxKeys, encURL, err
}

// encodingURL reports whether the request asks for encoding-type=url; any other
// encoding type is 400 InvalidArgument.
func (c *call) encodingURL() (bool, error) {
	v, ok := c.query["encoding-type"]
	if !ok {
		return false, nil
	}
	if v[0] != "url" {
		return false, s3.Errorf(s3.InvalidArgument, "Invalid Encoding Method specified in Request")
	}
	return true, nil
}
