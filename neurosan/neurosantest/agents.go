package neurosantest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gamelink-go/gamelink/neurosan"
)

// MathGuy returns the neuro-san "math_guy" example: it reads the numbers x
// and y from sly_data, applies the operation named in the text (add by
// default; "subtract"/"minus", "multiply"/"times", "divide"), and returns
// the result in sly_data "equals", the only key its allow-list lets out.
// With MAXIMAL it streams the calculator's steps and a progress message.
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
	}
}

func mathScript(ctx context.Context, t *Turn) Reply {
	var x, y float64
	if json.Unmarshal(t.SlyData["x"], &x) != nil || json.Unmarshal(t.SlyData["y"], &y) != nil {
		return Reply{Text: "I need numbers x and y in sly_data."}
	}
	op, r := "+", x+y
	switch low := strings.ToLower(t.Text); {
	case strings.Contains(low, "subtract"), strings.Contains(low, "minus"):
		op, r = "-", x-y
	case strings.Contains(low, "multiply"), strings.Contains(low, "times"):
		op, r = "*", x*y
	case strings.Contains(low, "divide"):
		op, r = "/", x/y
	}
	calc := []neurosan.Origin{{Tool: "math_guy"}, {Tool: "calculator"}}
	steps := []neurosan.ChatMessage{
		{Type: neurosan.TypeAI, Text: "Calling the calculator with x " + op + " y."},
		{Type: neurosan.TypeAgentProgress, Origin: calc, Structure: json.RawMessage(`{"progress":0.5}`)},
		{Type: neurosan.TypeAgentToolResult, Origin: calc, Text: format(r), ToolResultOrigin: calc},
	}
	for _, m := range steps {
		if t.Emit(ctx, m) != nil {
			return Reply{}
		}
	}
	eq, _ := json.Marshal(r)
	return Reply{
		Text:    fmt.Sprintf("%s %s %s = %s", format(x), op, format(y), format(r)),
		SlyData: map[string]json.RawMessage{"equals": eq, "scratch": json.RawMessage(`"private"`)},
	}
}

func format(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

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
