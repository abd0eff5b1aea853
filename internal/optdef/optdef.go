// Package optdef applies the rule the clients' withDefaults follow for a
// numeric option (neuro, xiaotangyuan, neurosan): zero means the default;
// a negative value either disables the setting, and is kept, or is
// invalid.
package optdef

import "fmt"

// Number is the type of a numeric option: a count, a size or a
// time.Duration.
type Number interface{ ~int | ~int64 }

// Field is one numeric option of an Options struct.
type Field[T Number] struct {
	name    string // the Options field, for the caller's ConfigError
	p       *T
	def     T
	disable bool // negative disables the setting; otherwise it is invalid
}

// Positive is an option for which negative is invalid: after [Apply] it
// is positive.
func Positive[T Number](name string, p *T, def T) Field[T] { return Field[T]{name, p, def, false} }

// NegativeOff is an option for which negative disables the setting.
func NegativeOff[T Number](name string, p *T, def T) Field[T] {
	return Field[T]{name, p, def, true}
}

// Apply sets each field that is zero to its default, in order, up to the
// first that is negative where that is invalid; it returns that field's
// name and the reason, "negative (<value>)", or "" when all are valid.
func Apply[T Number](fields ...Field[T]) (name, reason string) {
	for _, f := range fields {
		switch {
		case *f.p == 0:
			*f.p = f.def
		case *f.p < 0 && !f.disable:
			return f.name, fmt.Sprintf("negative (%v)", *f.p)
		}
	}
	return "", ""
}
