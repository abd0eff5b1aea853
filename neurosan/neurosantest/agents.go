package neurosantest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gamelink-go/gamelink/neurosan"
)

// MathGuy returns the neuro-san "math_guy" example: it reads the numbers x
// and y from sly_data, applies the operation named in the text (add by
// default; "subtract"/"minus", "multiply"/"times", "divide"), and returns
// the result in sly_data "equals", the only key its allow-list lets out.
// Numbers follow Python: integers stay integers except through "divide",
// and, as with a numpy-based tool, dividing by zero gives Infinity or NaN.
// With MAXIMAL it streams the calculator's steps and a progress message.
// Its network is distributable: the tool route calls "calculator" with
// args {"operation": …} and sly_data x and y, and returns "equals".
func MathGuy() Agent {
	return Agent{
		Name:          "math_guy",
		Description:   "Does arithmetic on sly_data x and y.",
		Tags:          []string{"example"},
		SlyDataSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}}`),
		Connectivity: []neurosan.Node{
			{Origin: "math_guy", Tools: []string{"calculator"}, DisplayAs: "llm_agent"},
			{Origin: "calculator", DisplayAs: "coded_tool"},
		},
		AllowSlyData: []string{"equals"},
		Script:       mathScript,
		Tools: map[string]Tool{"calculator": {
			Run:             calculatorTool,
			AllowSlyDataOut: []string{"equals"},
		}},
	}
}

// calculation is one run of the calculator.
type calculation struct {
	x, y, r string // as Python writes them
	op      string
}

// calculate applies the operation named in text to sly_data x and y.
func calculate(text string, sly map[string]json.RawMessage) (*calculation, error) {
	x, xint, err1 := number(sly["x"])
	y, yint, err2 := number(sly["y"])
	if err1 != nil || err2 != nil {
		return nil, errors.New("I need numbers x and y in sly_data.")
	}
	op, r := "+", x+y
	switch low := strings.ToLower(text); {
	case strings.Contains(low, "subtract"), strings.Contains(low, "minus"):
		op, r = "-", x-y
	case strings.Contains(low, "multiply"), strings.Contains(low, "times"):
		op, r = "*", x*y
	case strings.Contains(low, "divide"):
		op, r = "/", x/y
		if y == 0 && x == 0 {
			r = math.NaN()
		}
	}
	return &calculation{x: pyNumber(x, xint), y: pyNumber(y, yint), r: pyNumber(r, xint && yint && op != "/"), op: op}, nil
}

// number reads a JSON number (NaN and Infinity included) and whether it is
// an integer to Python.
func number(raw json.RawMessage) (float64, bool, error) {
	s := strings.TrimSpace(string(raw))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.HasPrefix(s, "+") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "-inf") {
		return 0, false, errors.New("not a number")
	}
	return f, !strings.ContainsAny(s, ".eEnN"), nil
}

func pyNumber(f float64, integer bool) string {
	if integer && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return string(appendPyFloat(nil, f))
}

func mathScript(ctx context.Context, t *Turn) Reply {
	c, err := calculate(t.Text, t.SlyData)
	if err != nil {
		return Reply{Text: err.Error()}
	}
	calc := []neurosan.Origin{{Tool: "math_guy"}, {Tool: "calculator"}}
	steps := []neurosan.ChatMessage{
		{Type: neurosan.TypeAI, Text: "Calling the calculator with x " + c.op + " y."},
		{Type: neurosan.TypeAgentProgress, Origin: calc, Structure: json.RawMessage(`{"progress":0.5}`)},
		{Type: neurosan.TypeAgentToolResult, Origin: calc, Text: c.r, ToolResultOrigin: calc},
	}
	for _, m := range steps {
		if t.Emit(ctx, m) != nil {
			return Reply{}
		}
	}
	return Reply{
		Text:    fmt.Sprintf("%s %s %s = %s", c.x, c.op, c.y, c.r),
		SlyData: map[string]json.RawMessage{"equals": json.RawMessage(c.r), "scratch": json.RawMessage(`"private"`)},
	}
}

func calculatorTool(ctx context.Context, args, sly map[string]json.RawMessage) (json.RawMessage, error) {
	var op string
	json.Unmarshal(args["operation"], &op)
	c, err := calculate(op, sly)
	if err != nil {
		return nil, err
	}
	sly["equals"] = json.RawMessage(c.r)
	return json.RawMessage(c.r), nil
}

// QuestDesigner returns a nested-name agent ("games/quest_designer") that
// remembers the conversation: each answer names the turn number (from the
// chat history it was sent back) and the player's last words.
func QuestDesigner() Agent {
	return Agent{
		Name:        "games/quest_designer",
		Description: "Designs side quests for the current town.",
		Tags:        []string{"games"},
		FrontMan:    "quest_designer",
		Connectivity: []neurosan.Node{
			{Origin: "quest_designer", Tools: []string{"lore_keeper", "reward_balancer"}},
			{Origin: "lore_keeper"},
			{Origin: "reward_balancer", DisplayAs: "coded_tool"},
		},
		MaxMessageHistory: 20,
		Script:            questScript,
	}
}

func questScript(ctx context.Context, t *Turn) Reply {
	turn := 1
	for _, m := range t.History {
		if m.Type == neurosan.TypeHuman {
			turn++
		}
	}
	lore := []neurosan.Origin{{Tool: "quest_designer"}, {Tool: "lore_keeper"}}
	if t.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAgent, Origin: lore, Text: "The town has an old well and a missing cat."}) != nil {
		return Reply{}
	}
	return Reply{
		Text:      fmt.Sprintf("Quest %d: about %q, find the cat by the old well.", turn, t.Text),
		Structure: json.RawMessage(fmt.Sprintf(`{"quest":%d}`, turn)),
	}
}

// DemoAgents returns the agents neurosan-chat --fake serves: MathGuy and
// QuestDesigner.
func DemoAgents() []Agent { return []Agent{MathGuy(), QuestDesigner()} }
