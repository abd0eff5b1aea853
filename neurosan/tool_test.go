package neurosan_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// A coded tool of a distributable network is called directly: args and
// sly_data in, its output and the sly_data it may return out. Issue #25.
func TestClient_CallTool(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), Unavailable: 1})
	c := fakeClient(t, s, nil)
	ctx := context.Background()
	res, err := c.CallTool(ctx, "math_guy", "calculator", &neurosan.ToolRequest{
		Args:    map[string]json.RawMessage{"operation": raw(`"multiply"`)},
		SlyData: map[string]json.RawMessage{"x": raw("6"), "y": raw("7"), "secret": raw(`"s"`)},
	})
	testutil.Success(t, err)
	testutil.Equal(t, "result", *res, neurosan.ToolResult{Output: raw("42"), SlyData: map[string]json.RawMessage{"equals": raw("42")}})
	testutil.Equal(t, "503 retried", s.Requests(), 2)

	res, err = c.CallTool(ctx, "math_guy", "calculator", &neurosan.ToolRequest{
		Args:    map[string]json.RawMessage{"operation": raw(`"divide"`)},
		SlyData: map[string]json.RawMessage{"x": raw("1"), "y": raw("0")},
	})
	testutil.Success(t, err)
	testutil.Equal(t, "as Python wrote it", string(res.Output), "Infinity")
	var f float64
	testutil.Success(t, neurosan.Unmarshal(res.Output, &f))
	testutil.Equal(t, "decoded", math.IsInf(f, 1), true)

	res, err = c.CallTool(ctx, "math_guy", "calculator", nil)
	testutil.Success(t, err)
	testutil.Equal(t, "tool error", res.Error, true)
	testutil.Equal(t, "its message", string(res.Output), `"Error: I need numbers x and y in sly_data."`)
	testutil.Equal(t, "nothing back", len(res.SlyData), 0)
}

func TestClient_CallTool_errors(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	c := fakeClient(t, s, nil)
	ctx := context.Background()
	tests := []struct {
		agent, tool string
		target      error
		msg         string
	}{
		{"games/quest_designer", "lore_keeper", neurosan.ErrBadRequest, "Invalid agent or tool name."},
		{"games/quest_designer", "x y", neurosan.ErrBadRequest, "Invalid agent or tool name."},
		{"nobody", "calculator", neurosan.ErrNotFound, "Agent network is not distributable on this server."},
		{"math_guy", "abacus", neurosan.ErrNotFound, "Tool not found in agent network."},
		{"math_guy", "", neurosan.ErrInvalidAgent, ""},
		{"math_guy", "a/b", neurosan.ErrInvalidAgent, ""},
		{"", "calculator", neurosan.ErrInvalidAgent, ""},
	}
	for _, tc := range tests {
		_, err := c.CallTool(ctx, tc.agent, tc.tool, nil)
		testutil.ErrorIs(t, err, tc.target)
		var se *neurosan.StatusError
		if tc.msg != "" {
			testutil.ErrorAs(t, err, &se)
			testutil.Equal(t, "message", se.Message, tc.msg)
		}
	}
}
