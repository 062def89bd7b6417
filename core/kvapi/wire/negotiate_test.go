package wire

import "testing"

func TestNegotiate(t *testing.T) {
	siblings := []string{"text/plain", "multipart/mixed"}
	nodeClient := "multipart/mixed,application/json;q=0.7, */*;q=0.5"
	tests := []struct {
		name   string
		accept string
		offers []string
		want   string // "" means 406
	}{
		{"no accept", "", siblings, "text/plain"},
		{"blank accept", "  ", siblings, "text/plain"},
		{"star star", "*/*", siblings, "text/plain"},
		{"lone star", "*", siblings, "text/plain"},
		{"client prefers multipart", nodeClient, siblings, "multipart/mixed"},
		{"client json object", nodeClient, []string{"application/json"}, "application/json"},
		{"client text object", nodeClient, []string{"text/plain"}, "text/plain"},
		{"client binary object", nodeClient, []string{"image/png"}, "image/png"},
		{"client json beats star", nodeClient, []string{"text/plain", "application/json"}, "application/json"},
		{"star with q", "*/*;q=0.8", []string{"application/json", "text/plain"}, "application/json"},
		{"exact mismatch 406", "application/json", []string{"text/plain"}, ""},
		{"link walk 406", "application/json, text/plain", []string{"multipart/mixed"}, ""},
		{"type wildcard", "text/*", []string{"application/json", "text/html"}, "text/html"},
		{"q zero excludes", "text/html;q=0", []string{"text/html"}, ""},
		{"q zero beats star", "*/*, text/plain;q=0", siblings, "multipart/mixed"},
		{"q zero star", "*/*;q=0", siblings, ""},
		{"q order", "text/plain;q=0.5, multipart/mixed", siblings, "multipart/mixed"},
		{"tie: accept order", "text/plain, multipart/mixed", []string{"multipart/mixed", "text/plain"}, "text/plain"},
		{"tie: specificity", "*/*;q=0.1, text/*;q=0.1", []string{"application/json", "text/plain"}, "text/plain"},
		{"tie: exact over type wildcard", "text/*, text/html", []string{"text/plain", "text/html"}, "text/html"},
		{"more specific range sets q", "text/*;q=0.9, text/plain;q=0.2", []string{"text/plain", "text/html"}, "text/html"},
		{"params ignored", "application/json; charset=utf-8", []string{"application/json"}, "application/json"},
		{"offer params ignored", "text/plain", []string{"text/plain; charset=utf-8"}, "text/plain; charset=utf-8"},
		{"case-insensitive", "APPLICATION/JSON", []string{"application/json"}, "application/json"},
		{"leading dot q", "text/plain;q=.5, application/json;q=0.4", []string{"application/json", "text/plain"}, "text/plain"},
		{"bad q ignored", "text/plain;q=abc", []string{"text/plain"}, ""},
		{"bad q falls back", "text/plain;q=abc, */*;q=0.3", []string{"text/plain"}, "text/plain"},
		{"q above one ignored", "text/plain;q=1.5", []string{"text/plain"}, ""},
		{"garbage", "garbage", siblings, ""},
		{"empty entries", ",, text/plain ,", siblings, "text/plain"},
		{"no offers", "*/*", nil, ""},
		{"star subtype type", "*/plain", []string{"text/plain"}, ""},
		{"ping html", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", []string{"text/html"}, "text/html"},
		{"root listing json", "application/json", []string{"text/html", "application/json"}, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Negotiate(tt.accept, tt.offers)
			if ok != (tt.want != "") || got != tt.want {
				t.Fatalf("Negotiate(%q, %q) = %q, %v; want %q", tt.accept, tt.offers, got, ok, tt.want)
			}
		})
	}
}
