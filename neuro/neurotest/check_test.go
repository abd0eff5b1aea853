package neurotest

import (
	"slices"
	"testing"
	"time"
)

func Test_checker(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type step struct {
		at       int // ms
		fromGame bool
		msg      string
	}
	reg := `{"command":"actions/register","game":"G","data":{"actions":[{"name":"a","description":"A"}]}}`
	tests := []struct {
		name  string
		steps []step
		want  []string
	}{
		{"clean session", []step{
			{0, true, `{"command":"startup","game":"G"}`},
			{1, true, reg},
			{2, true, `{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`},
			{600, false, `{"command":"action","data":{"id":"1","name":"a"}}`},
			{700, true, `{"command":"action/result","game":"G","data":{"id":"1","success":true}}`},
			{800, true, `{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`},
		}, nil},
		{"startup missing and late", []step{
			{0, true, `{"command":"context","game":"G","data":{"message":"m","silent":true}}`},
			{900, true, `{"command":"startup","game":"G"}`},
			{901, true, `{"command":"startup","game":"H"}`},
		}, []string{"prot/startup/missing", "perf/late/startup", "prot/v1/game_renamed", "prot/startup/multiple", "perf/late/startup"}},
		{"force problems", []step{
			{0, true, `{"command":"startup","game":"G"}`},
			{1, true, reg},
			{2, true, `{"command":"actions/force","game":"G","data":{"query":"q","action_names":[]}}`},
			{3, true, `{"command":"actions/force","game":"G","data":{"query":"q","action_names":["zz"]}}`},
			{4, true, `{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a","zz"]}}`},
			{5, true, `{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`},
		}, []string{"prot/force/empty", "prot/force/all_invalid", "prot/force/some_invalid", "prot/force/multiple"}},
		{"results", []step{
			{0, true, `{"command":"startup","game":"G"}`},
			{1, true, reg},
			{2, false, `{"command":"action","data":{"id":"1","name":"a"}}`},
			{3, true, `{"command":"actions/force","game":"G","data":{"query":"q","action_names":["a"]}}`},
			{1000, true, `{"command":"action/result","game":"G","data":{"id":"1","success":false}}`},
			{1001, true, `{"command":"action/result","game":"G","data":{"id":"1","success":true}}`},
			{1002, false, `{"command":"action","data":{"id":"2","name":"a"}}`},
			{7003, true, `{"command":"action/result","game":"G","data":{"id":"2","success":true,"message":"ok"}}`},
			{7004, false, `{"command":"action","data":{"id":"3","name":"a"}}`},
		}, []string{"prot/force/while_pending_result", "prot/result/error_nomessage", "perf/late/action_result", "prot/result/unexpected", "perf/timeout/action_result", "perf/timeout/action_result"}},
		{"malformed data", []step{
			{0, true, `{"command":"startup","game":"G"}`},
			{1, true, `{"command":"actions/register","game":"G"}`},
			{2, true, `{"command":"actions/register","game":"G","data":{"actions":{"name":"a"}}}`},
			{3, true, `{"command":"actions/force","game":"G","data":null}`},
			{4, true, `{"command":"action/result","game":"G","data":{"id":1,"success":true}}`},
			{5, true, `{"command":"actions/unregister","game":"G","data":{"action_names":"a"}}`},
		}, []string{"prot/invalid_message", "prot/invalid_message", "prot/invalid_message", "prot/invalid_message", "prot/invalid_message"}},
		{"register problems", []step{
			{0, true, `{"command":"startup","game":"G"}`},
			{1, true, reg},
			{2, true, reg},
			{3, true, `{"command":"actions/register","game":"G","data":{"actions":[{"name":"a","description":"other"},{"name":"B","description":"","schema":{}}]}}`},
			{4, true, `{"command":"actions/unregister","game":"G","data":{"action_names":["nope"]}}`},
			{5, true, `{"command":"actions/unregister","game":"G","data":{"action_names":["a"]}}`},
			{6, true, `{"command":"actions/unregister","game":"G","data":{"action_names":["a"]}}`},
		}, []string{"perf/register/identical_duplicate", "prot/v1/register/conflict", "prot/action/invalid_name", "prot/action/no_desc", "prot/schema/prefer_omit_to_empty", "prot/unregister/unknown", "prot/unregister/inactive"}},
		// Issue #19: the answer to reregister_all is asked for; only a
		// registration nobody asked for is a duplicate.
		{"register asked for again", []step{
			{0, true, `{"command":"startup","game":"G"}`},
			{1, true, reg},
			{2, false, `{"command":"actions/reregister_all"}`},
			{3, true, reg},
			{4, true, reg},
		}, []string{"perf/register/identical_duplicate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c checker
			c.connect(t0)
			for _, s := range tt.steps {
				if s.fromGame {
					c.fromGame(ms(s.at), []byte(s.msg))
				} else {
					c.fromNeuro(ms(s.at), []byte(s.msg))
				}
			}
			c.finish(ms(20000))
			var got []string
			for _, f := range c.findings() {
				got = append(got, f.Key)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
