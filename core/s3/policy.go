package s3

import "encoding/json"

// Policy is a bucket policy. (Being written: parsing and evaluation.)
type Policy struct {
	Raw json.RawMessage `json:"raw"`
}

// PolicyRequest is what a policy is evaluated against.
type PolicyRequest struct {
	Requester Requester
	Action    string
	Bucket    string
	Key       string
}

// Evaluate says whether the policy allows, denies or says nothing about req.
func (p *Policy) Evaluate(req PolicyRequest) Effect { return EffectNone }
