package neurosantest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// Tool is a coded tool of a distributable network, which a client calls
// directly with POST /api/v1/{agent}/tool/{tool}.
type Tool struct {
	// Run runs the tool with the call's args and sly_data. It may change
	// slyData in place, as a CodedTool does. It returns the tool's output
	// (any JSON value as Python reads it; nil is null) or an error, which
	// the server reports with tool_error true and the output
	// "Error: <message>".
	Run func(ctx context.Context, args, slyData map[string]json.RawMessage) (json.RawMessage, error)
	// AllowSlyDataIn is the tool's allow.to_downstream.sly_data: if nil,
	// every key of the call's sly_data reaches the tool; otherwise only
	// these keys.
	AllowSlyDataIn []string
	// AllowSlyDataOut is the tool's allow.from_downstream.sly_data: only
	// these keys of the sly_data come back (none if empty: the server
	// redacts by default).
	AllowSlyDataOut []string
	// ClientSide tools run in the client's runtime: the route refuses them.
	ClientSide bool
}

// pyEscape is Python's html.escape, which the server applies to the
// messages of its tool route.
var pyEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace

// safeName is the server's check of both names of the tool route, made
// before anything else.
var safeName = regexp.MustCompile(`\A[A-Za-z0-9_\-]{1,128}\z`)

// tool serves a direct tool call. The checks and their messages are the
// real handler's, in its order; messages pass through html.escape.
func (s *Server) tool(w http.ResponseWriter, r *http.Request, agent, name string) {
	if !safeName.MatchString(agent) || !safeName.MatchString(name) {
		writeError(w, http.StatusBadRequest, "Invalid agent or tool name.")
		return
	}
	if !s.acquire() {
		writeError(w, http.StatusServiceUnavailable, "Too many concurrent requests")
		return
	}
	defer s.release(nil)
	w.Header().Set("Access-Control-Allow-Origin", "*")
	a := s.agents[agent]
	if a == nil || len(a.Tools) == 0 {
		writeError(w, http.StatusNotFound, "Agent network is not distributable on this server.")
		return
	}
	t, ok := a.Tools[name]
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, "Tool not found in agent network.")
		return
	case t.ClientSide:
		writeError(w, http.StatusBadRequest, "Tool is client-side; it cannot be invoked via /tool/.")
		return
	case t.Run == nil:
		writeError(w, http.StatusBadRequest, pyEscape("Tool is not a CodedTool (no 'class' field)."))
		return
	}
	args, sly, err := toolRequest(r)
	if err != nil {
		if errors.Is(err, errNotObject) {
			writeError(w, http.StatusInternalServerError, "Internal server error")
		} else {
			writeError(w, http.StatusBadRequest, pyEscape(err.Error()))
		}
		return
	}
	in := map[string]json.RawMessage{}
	for k, v := range sly {
		if t.AllowSlyDataIn == nil || slices.Contains(t.AllowSlyDataIn, k) {
			in[k] = v
		}
	}
	out, toolErr := t.Run(s.ctx, args, in)
	failed := toolErr != nil
	if failed {
		out, _ = json.Marshal("Error: " + toolErr.Error())
	} else if len(out) == 0 {
		out = json.RawMessage("null")
	}
	back := map[string]json.RawMessage{}
	for k, v := range in {
		if slices.Contains(t.AllowSlyDataOut, k) {
			back[k] = v
		}
	}
	var o wire.Object
	o.Raw(wire.ToolOutput, out)
	o.Members(wire.SlyData, back)
	o.Value(wire.ToolError, failed)
	b, err := appendPy(nil, done(&o))
	if err != nil { // a tool's output that is not JSON
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	// json.dumps written as a string: no "</" escaping, and the content
	// type the handler set.
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// toolRequest reads {args, sly_data}: an empty body is {}, and a member
// that Python finds false (absent, null, {}, [], 0, "", false) is {}.
func toolRequest(r *http.Request) (args, sly map[string]json.RawMessage, err error) {
	body, err := readBody(r.Body)
	if err != nil {
		return nil, nil, err
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	ms, err := pyObject(body)
	if errors.Is(err, errNotObject) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, errors.New("Invalid JSON: " + err.Error())
	}
	dict := func(raw []byte) (map[string]json.RawMessage, bool) {
		switch string(raw) {
		case "", "null", "{}", "[]", "0", `""`, "false":
			return map[string]json.RawMessage{}, true
		}
		m, err := pyObject(raw)
		if err != nil {
			return nil, false
		}
		out := map[string]json.RawMessage{}
		for _, mem := range m {
			out[mem.key] = mem.val
		}
		return out, true
	}
	args, ok1 := dict(member(ms, wire.Args))
	sly, ok2 := dict(member(ms, wire.SlyData))
	if !ok1 || !ok2 {
		return nil, nil, errors.New(`Request body must be {"args": {...}, "sly_data": {...}}.`)
	}
	return args, sly, nil
}
