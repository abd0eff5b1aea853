package neurosan

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// ToolRequest is a direct call of one coded tool, for [Client.CallTool].
type ToolRequest struct {
	// Args are the tool's arguments, one raw JSON value per name. If
	// empty, {} is sent.
	Args map[string]json.RawMessage
	// SlyData is the call's sly_data, one raw JSON value per key. The tool
	// sees the keys its allow.to_downstream.sly_data lets in (every key if
	// it has none). If empty, {} is sent.
	SlyData map[string]json.RawMessage
}

// ToolResult is the answer of a direct tool call.
type ToolResult struct {
	// Output is what the tool returned, as raw JSON (any value; NaN and
	// Infinity kept as written, see [Unmarshal]). When Error is true, it is
	// the string "Error: <message>".
	Output json.RawMessage
	// SlyData is the sly_data the tool's allow.from_downstream.sly_data
	// lets back: none if it has no such list.
	SlyData map[string]json.RawMessage
	// Error reports that the tool raised an exception, whose message is in
	// Output. The call itself succeeded.
	Error bool
}

// CallTool calls one coded tool of an agent network directly, without its
// agents: POST /api/v1/{agent}/tool/{tool}, {args, sly_data} in,
// {tool_output, sly_data, tool_error} out. The server serves it only for a
// network it marks distributable, and only for a server-side coded tool:
// otherwise a [*StatusError] matching ErrNotFound ("Agent network is not
// distributable on this server.", "Tool not found in agent network.") or
// ErrBadRequest. The server accepts only names of 1 to 128 letters,
// digits, '_' and '-' here (so no nested agent names): others are
// ErrBadRequest too. A 503 is retried as for StreamingChat; ctx and
// Options.TurnTimeout bound the call.
func (c *Client) CallTool(ctx context.Context, agent, tool string, req *ToolRequest) (_ *ToolResult, err error) {
	defer errd.Wrap(&err, "neurosan: call tool")
	p, err := agentPath(agent)
	if err != nil {
		return nil, err
	}
	if tool == "" || strings.Contains(tool, "/") {
		return nil, fmt.Errorf("%w: tool %q", ErrInvalidAgent, tool)
	}
	if req == nil {
		req = &ToolRequest{}
	}
	w := newObject(nil)
	w.Members(wire.Args, req.Args)
	w.Members(wire.SlyData, req.SlyData)
	body, err := w.Bytes()
	if err != nil {
		return nil, err
	}
	var resp wire.ToolAnswer
	u := c.base + wire.APIPrefix + p + "/" + wire.RouteTool + "/" + url.PathEscape(tool)
	if err := c.callJSON(ctx, http.MethodPost, wire.RouteTool, agent, u, body, c.opts.Retries, &resp); err != nil {
		return nil, err
	}
	return &ToolResult{Output: resp.Output, SlyData: resp.SlyData, Error: resp.Error}, nil
}
