package rpengine_test

import (
	"errors"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// engineCodes are the request.error codes the engine sends, each with its
// sentinel (docs/rpengine-protocol.md, "Engine to game").
var engineCodes = []struct {
	code     string
	sentinel error
}{
	{"invalid_payload", rpengine.ErrInvalidPayload},
	{"card_resync_required", rpengine.ErrCardResyncRequired},
	{"invalid_character_card", rpengine.ErrInvalidCharacterCard},
	{"service_not_started", rpengine.ErrServiceNotStarted},
	{"capacity_exceeded", rpengine.ErrCapacityExceeded},
	{"duplicate_request", rpengine.ErrDuplicateRequest},
	{"microphone_not_enabled", rpengine.ErrMicrophoneNotEnabled},
	{"voice_capture_active", rpengine.ErrVoiceCaptureActive},
	{"unsupported_language", rpengine.ErrUnsupportedLanguage},
	{"unsupported_voice", rpengine.ErrUnsupportedVoice},
	{"invalid_request", rpengine.ErrInvalidRequest},
	{"prompt_too_large", rpengine.ErrPromptTooLarge},
	{"stt_model_not_installed", rpengine.ErrSTTModelNotInstalled},
	{"unsupported_sample_rate", rpengine.ErrUnsupportedSampleRate},
	{"empty_speech", rpengine.ErrEmptySpeech},
	{"request_failed", rpengine.ErrRequestFailed},
	{"audio_transport_failed", rpengine.ErrAudioTransportFailed},
}

// Issue #33: every code the engine sends has a sentinel, which a
// *RequestError of that code matches, and of no other code; an unknown
// code matches none.
func TestRequestError_sentinels(t *testing.T) {
	t.Parallel()
	for _, c := range engineCodes {
		err := error(&rpengine.RequestError{Code: c.code})
		for _, o := range engineCodes {
			testutil.Equal(t, c.code+" is "+o.code, errors.Is(err, o.sentinel), o.code == c.code)
		}
		testutil.Equal(t, "the sentinel names its code", c.sentinel.Error(), "rpengine: "+c.code)
	}
	for _, c := range engineCodes {
		if errors.Is(&rpengine.RequestError{Code: "some_future_code"}, c.sentinel) {
			t.Errorf("an unknown code matches %v", c.sentinel)
		}
	}
}

// Issue #33: a field error names the Go field, RequestID, not the wire's
// requestId.
func TestServer_Reply_activeRequestID(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	f.dial(t, &enginetest.Options{Faults: enginetest.Faults{Silent: true}})
	ctx := ctxT(t)
	req := textReq(testCard(t), "hi")
	req.RequestID = "turn-1"
	_, err := f.srv.Reply(ctx, req)
	testutil.Success(t, err)
	_, err = f.srv.Reply(ctx, req)
	var fe *rpengine.FieldError
	testutil.ErrorAs(t, err, &fe)
	testutil.Equal(t, "field", fe.Field, "RequestID")
}
