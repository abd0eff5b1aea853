package neurosan

import (
	"net/url"
	"testing"
)

// Test_redirectRefused: where a redirect may go, from the base URL's rules
// (docs/neurosan-protocol.md, "Redirects"). Issue #34 item 1.
func Test_redirectRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, from, to string
		refused        bool
	}{
		{"loopback to loopback", "http://127.0.0.1:8080/api/v1/list", "http://localhost:9090/x", false},
		{"loopback to https elsewhere", "http://localhost:8080/api/v1/list", "https://agents.example/x", true},
		{"loopback to ::1", "http://[::1]:8080/x", "http://127.0.0.1:8080/y", false},
		{"https to https elsewhere", "https://agents.example/x", "https://lb.example/x", false},
		{"https downgraded", "https://agents.example/x", "http://agents.example/x", true},
		{"plain http, same host", "http://agents.example:8080/x", "http://agents.example:8080/x/", false},
		{"plain http, another host", "http://agents.example:8080/x", "http://other.example/x", true},
		{"plain http upgraded", "http://agents.example/x", "https://agents.example/x", false},
		{"user information", "https://agents.example/x", "https://u:p@agents.example/x", true},
		{"other scheme", "https://agents.example/x", "ftp://agents.example/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			from, _ := url.Parse(tt.from)
			to, _ := url.Parse(tt.to)
			if why := redirectRefused(from, to); (why != "") != tt.refused {
				t.Errorf("refused = %q, want refused %v", why, tt.refused)
			}
		})
	}
}
