package s3xml

import "encoding/xml"

// EncryptionRule is the one rule of a bucket's ServerSideEncryptionConfiguration: the
// default algorithm (SSEAlgorithm), the KMS key it may name, and BucketKeyEnabled.
type EncryptionRule struct {
	Algorithm        string
	KMSMasterKeyID   string
	BucketKeyEnabled bool
}

// encryptionDoc is a ServerSideEncryptionConfiguration request body.
type encryptionDoc struct {
	XMLName xml.Name
	Rules   []struct {
		Default *struct {
			Algorithm *string `xml:"SSEAlgorithm"`
			KMSKeyID  string  `xml:"KMSMasterKeyID"`
		} `xml:"ApplyServerSideEncryptionByDefault"`
		BucketKeyEnabled bool `xml:"BucketKeyEnabled"`
	} `xml:"Rule"`
}

// ParseEncryption reads the body of PUT ?encryption,
//
//	<ServerSideEncryptionConfiguration xmlns="…"><Rule><ApplyServerSideEncryptionByDefault>
//	<SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault>
//	<BucketKeyEnabled>false</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>
//
// and returns its rule. A body that is not such a document, or has other than one
// Rule, or a Rule without its default or algorithm, is a 400 MalformedXML
// *s3types.Error; the algorithm's value is the caller's to check. The caller bounds the
// body.
func ParseEncryption(body []byte) (EncryptionRule, error) {
	var doc encryptionDoc
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "ServerSideEncryptionConfiguration" ||
		len(doc.Rules) != 1 || doc.Rules[0].Default == nil || doc.Rules[0].Default.Algorithm == nil {
		return EncryptionRule{}, errMalformedXML()
	}
	r := doc.Rules[0]
	return EncryptionRule{Algorithm: *r.Default.Algorithm, KMSMasterKeyID: r.Default.KMSKeyID, BucketKeyEnabled: r.BucketKeyEnabled}, nil
}

// MarshalEncryption renders the answer of GET ?encryption (the document
// ParseEncryption reads, with BucketKeyEnabled always written).
func MarshalEncryption(r EncryptionRule) []byte {
	w := NewWriter("ServerSideEncryptionConfiguration", true, 256)
	w.Open("Rule")
	w.Open("ApplyServerSideEncryptionByDefault")
	w.Elem("SSEAlgorithm", r.Algorithm)
	w.Close("ApplyServerSideEncryptionByDefault")
	w.ElemBool("BucketKeyEnabled", r.BucketKeyEnabled)
	w.Close("Rule")
	return w.Bytes()
}
