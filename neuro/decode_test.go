package neuro

import (
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #19 item 4.
func Test_integralLiteral(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"1.0", "1", true},
		{"-2.00", "-2", true},
		{"1e2", "100", true},
		{"1E+2", "100", true},
		{"0.5e1", "5", true},
		{"2500e-2", "25", true},
		{"-0.0", "0", true},
		{"0e999999", "0", true},
		{"9.223372036854775807e18", "9223372036854775807", true},
		{"0.010000000000000e19", "100000000000000000", true}, // found by FuzzIntegralLiteral
		{"1", "", false},    // already an integer literal
		{"1.5", "", false},  // a fraction
		{"1e-1", "", false}, // a fraction
		{"1.0000000000000001", "", false},
		{"1e19", "", false}, // more than int64 holds
		{"9.3e18", "", false},
		{"1e999999999", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, ok := integralLiteral(tt.in)
			testutil.Equal(t, "ok", ok, tt.ok)
			testutil.Equal(t, "literal", got, tt.want)
		})
	}
}

func Test_pointerAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data string
		offset     int64
		want       string
	}{
		{"member", `{"slot":1.5}`, 11, "/slot"},
		{"array element member", `{"items":[{"x":1},{"x":"a"}]}`, 26, "/items/1/x"},
		{"object where an array goes", `{"items":{}}`, 10, "/items"},
		{"escaped name", `{"a/b":{"c~d":true}}`, 18, "/a~1b/c~0d"},
		{"root", `"x"`, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testutil.Equal(t, "pointer", pointerAt([]byte(tt.data), tt.offset), tt.want)
		})
	}
}

func Test_hasFractionOrExponent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		data string
		want bool
	}{
		{`{"cell":5,"mode":"sword.e1"}`, false},
		{`{"ok":true,"no":false,"s":"a\"1.0"}`, false},
		{`{"n":1.0}`, true},
		{`{"n":2e3}`, true},
		{`[1E2]`, true},
		{`{"s":"\\","n":1.5}`, true},
	}
	for _, tt := range tests {
		testutil.Equal(t, tt.data, hasFractionOrExponent([]byte(tt.data)), tt.want)
	}
}
