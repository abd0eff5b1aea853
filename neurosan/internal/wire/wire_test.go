package wire

import (
	"encoding/json"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestObject(t *testing.T) {
	t.Parallel()
	var o Object
	o.Value("type", "AI")
	o.Raw("skipped", nil)
	o.Raw(ChatContext, []byte(`{"a": NaN}`)) // as it is: the fake does not check
	o.Members(SlyData, map[string]json.RawMessage{"b": json.RawMessage(`2`), "a": nil})
	o.List("l", [][]byte{[]byte(`1`), []byte(`"x"`)})
	o.Value("html", "<a&b>")
	b, err := o.Bytes()
	testutil.Success(t, err)
	testutil.Equal(t, "object", string(b), `{"type":"AI","chat_context":{"a": NaN},"sly_data":{"a":null,"b":2},"l":[1,"x"],"html":"<a&b>"}`)

	var empty Object
	b, _ = empty.Bytes()
	testutil.Equal(t, "empty", string(b), `{}`)

	into := Into([]byte("x="))
	into.Value("n", 1)
	b, _ = into.Bytes()
	testutil.Equal(t, "appended", string(b), `x={"n":1}`)

	checked := Object{Valid: json.Valid}
	checked.Raw("bad", []byte(`{nope`))
	checked.Value("after", 1) // ignored after the first error
	_, err = checked.Bytes()
	testutil.Error(t, err)
	nested := Object{Valid: json.Valid}
	nested.Members("m", map[string]json.RawMessage{"k": json.RawMessage(`NaN`)})
	_, err = nested.Bytes()
	testutil.Error(t, err)
}
