package neuro

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gamelink-go/gamelink/neuro/internal/wire"
)

// Action is one thing Neuro can do in the game. The game declares its
// actions to a [Client]; the SDK registers them, validates Neuro's data
// against Schema, calls Validate, sends the result, then executes.
//
// An Action is a value: the client copies it. Validate and Execute may be
// nil. Schema must not be modified after the action is registered.
//
// When the connection an action came on is lost before its result is
// sent, the result is dropped (the server discards stale ids anyway) and
// the action is not executed.
type Action struct {
	// Name is lowercase, words separated by '_' or '-' (see [CheckName]).
	// [Options.Prefix] is added on the wire, never here.
	Name string
	// Description is read by Neuro directly. Required.
	Description string
	// Schema is a JSON Schema whose root has "type": "object", or nil for
	// an action without parameters (preferred over {}). Build it with
	// [Object]; check it with [LintSchema]. It may not load external
	// references: a $ref to another document is a [SchemaError].
	Schema json.RawMessage

	// Validate decides whether the (schema-valid) action can be done. It
	// runs on its own goroutine and must return before ctx ends (the
	// action's deadline); if it does not, the SDK answers success:false
	// with a "took too long" message and ignores its later return. Nil
	// accepts every schema-valid action. Use [Bind] for typed arguments.
	Validate func(ctx context.Context, inv *Invocation) Result
	// Execute performs the action after its successful result was sent.
	// It is called synchronously on the goroutine that receives the
	// *Invocation ([Client.Next], [Client.Events] or [Client.Poll]), in
	// order with other events, just before the invocation is returned; it
	// must not block for long. If nil, the game executes the invocation
	// when it receives it.
	Execute func(inv *Invocation)
	// Timeout bounds Validate. If zero, [Options.ActionTimeout] is used.
	Timeout time.Duration
}

// Result is a validator's verdict, sent to Neuro as action/result.
type Result struct {
	// Success false inside a force makes Neuro retry the whole force.
	Success bool
	// Message is read by Neuro. On failure make it actionable (list the
	// valid options).
	Message string
	// NoExecute keeps the SDK from executing the action even though
	// Success is true (see [Decline]).
	NoExecute bool
	// Value is handed to the executor as [Invocation.Value].
	Value any
}

// OK accepts the action; it will be executed. msg may be empty.
func OK(msg string) Result { return Result{Success: true, Message: msg} }

// Fail rejects the action with success:false, which makes Neuro retry a
// force. msg should say how to do better.
func Fail(msg string) Result { return Result{Success: false, Message: msg} }

// Decline rejects the action without making a force retry: success:true
// with an explanatory message, and no execution (the API's tip for
// failures that must not loop).
func Decline(msg string) Result { return Result{Success: true, Message: msg, NoExecute: true} }

// Bind adapts a validator with typed arguments: the (already schema-valid)
// data is decoded into a T with [Invocation.Decode], and on success the T
// becomes [Result.Value] unless fn set one. Data that does not fit T (the
// schema allows more than T holds) is answered success:false with a
// [DataError] message for Neuro: where, what came and what was expected,
// in JSON terms.
func Bind[T any](fn func(ctx context.Context, args T) Result) func(context.Context, *Invocation) Result {
	return func(ctx context.Context, inv *Invocation) Result {
		var v T
		if err := inv.Decode(&v); err != nil {
			return Fail(decodeError(inv.wireName(), inv.Data, err).Error())
		}
		r := fn(ctx, v)
		if r.Value == nil {
			r.Value = v
		}
		return r
	}
}

// CheckName reports whether name follows the API's naming rule: lowercase
// ASCII letters and digits, words separated by single '_' or '-'. It
// returns a *[NameError] otherwise.
func CheckName(name string) error {
	if name == "" {
		return &NameError{Name: name, Reason: "empty"}
	}
	prevSep := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevSep = false
		case c == '_' || c == '-':
			if prevSep {
				return &NameError{Name: name, Reason: "separator at start or doubled"}
			}
			prevSep = true
		case c >= 'A' && c <= 'Z':
			return &NameError{Name: name, Reason: "must be lowercase"}
		default:
			return &NameError{Name: name, Reason: "only a-z, 0-9, '_' and '-' are allowed"}
		}
	}
	if prevSep {
		return &NameError{Name: name, Reason: "ends with a separator"}
	}
	return nil
}

// sameDefinition reports whether two actions look the same to the server.
func sameDefinition(a, b *Action) bool {
	return wire.SameDefinition(wireAction{Name: a.Name, Description: a.Description, Schema: a.Schema},
		wireAction{Name: b.Name, Description: b.Description, Schema: b.Schema})
}
