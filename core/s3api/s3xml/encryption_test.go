package s3xml

import (
	"testing"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// TestParseEncryption: the one-rule document parses (BucketKeyEnabled and a KMS key
// id kept for the caller to judge); no rule, two rules, a rule without its default or
// algorithm, another root and non-XML are MalformedXML; what MarshalEncryption writes
// parses back to the same rule.
func TestParseEncryption(t *testing.T) {
	const open = `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`
	rule := func(inner string) string {
		return `<Rule><ApplyServerSideEncryptionByDefault>` + inner + `</ApplyServerSideEncryptionByDefault></Rule>`
	}
	good := []struct {
		body string
		want EncryptionRule
	}{
		{open + rule(`<SSEAlgorithm>AES256</SSEAlgorithm>`) + `</ServerSideEncryptionConfiguration>`, EncryptionRule{Algorithm: "AES256"}},
		{open + `<Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm><KMSMasterKeyID>k</KMSMasterKeyID>` +
			`</ApplyServerSideEncryptionByDefault><BucketKeyEnabled>true</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>`,
			EncryptionRule{Algorithm: "aws:kms", KMSMasterKeyID: "k", BucketKeyEnabled: true}},
	}
	for _, c := range good {
		got, err := ParseEncryption([]byte(c.body))
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.body, got, err, c.want)
		}
	}
	for _, body := range []string{
		open + `</ServerSideEncryptionConfiguration>`,
		open + rule(`<SSEAlgorithm>AES256</SSEAlgorithm>`) + rule(`<SSEAlgorithm>AES256</SSEAlgorithm>`) + `</ServerSideEncryptionConfiguration>`,
		open + `<Rule></Rule></ServerSideEncryptionConfiguration>`,
		open + rule(``) + `</ServerSideEncryptionConfiguration>`,
		`<Tagging>` + rule(`<SSEAlgorithm>AES256</SSEAlgorithm>`) + `</Tagging>`,
		`not xml`,
	} {
		if _, err := ParseEncryption([]byte(body)); !s3types.IsCode(err, s3types.MalformedXML) {
			t.Errorf("%s: %v, want MalformedXML", body, err)
		}
	}
	out := MarshalEncryption(EncryptionRule{Algorithm: "AES256", BucketKeyEnabled: true})
	wellFormed(t, out)
	if got, err := ParseEncryption(out); err != nil || got != (EncryptionRule{Algorithm: "AES256", BucketKeyEnabled: true}) {
		t.Fatalf("round trip of %s: %+v %v", out, got, err)
	}
}
