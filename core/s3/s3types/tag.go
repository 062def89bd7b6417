package s3types

// Tag is one object or bucket tag: a key and its value.
type Tag struct {
	Key   string `json:"k"`
	Value string `json:"v"`
}
