package neuro

import (
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func Test_registrySet(t *testing.T) {
	t.Parallel()
	a := Action{Name: "a", Description: "A"}
	b := Action{Name: "b", Description: "B"}
	b2 := Action{Name: "b", Description: "B", Schema: json.RawMessage(`{"type":"object"}`)}
	c := Action{Name: "c", Description: "C"}
	tests := []struct {
		name      string
		from, to  []Action
		wantUnreg []string
		wantReg   []string
	}{
		{"add to empty", nil, []Action{a, b}, nil, []string{"p_a", "p_b"}},
		{"no change", []Action{a, b}, []Action{b, a}, nil, nil},
		{"remove one add one", []Action{a, b}, []Action{a, c}, []string{"p_b"}, []string{"p_c"}},
		{"redefine", []Action{a, b}, []Action{a, b2}, []string{"p_b"}, []string{"p_b"}},
		{"clear", []Action{a, b}, nil, []string{"p_a", "p_b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRegistry("p_")
			_, _, err := r.set(tt.from)
			testutil.Success(t, err)
			unreg, reg, err := r.set(tt.to)
			testutil.Success(t, err)
			var regNames []string
			for _, e := range reg {
				regNames = append(regNames, e.wire)
			}
			if !slices.Equal(unreg, tt.wantUnreg) || !slices.Equal(regNames, tt.wantReg) {
				t.Errorf("unreg %q reg %q, want %q %q", unreg, regNames, tt.wantUnreg, tt.wantReg)
			}
			testutil.Equal(t, "set size", len(r.all()), len(tt.to))
		})
	}
}

func Test_registryAddConflict(t *testing.T) {
	t.Parallel()
	r := newRegistry("")
	_, err := r.add([]Action{{Name: "a", Description: "A"}, {Name: "a", Description: "other"}})
	var ce *ConflictError
	testutil.ErrorAs(t, err, &ce)
	testutil.Equal(t, "nothing added", len(r.all()), 0)
	added, err := r.add([]Action{{Name: "a", Description: "A"}, {Name: "a", Description: "A"}})
	testutil.Success(t, err)
	testutil.Equal(t, "added once", len(added), 1)
	r.commit(added)
	testutil.Equal(t, "removed", slices.Equal(r.remove([]string{"a", "zz"}), []string{"a"}), true)
}

// Test_registryRegisterBytes: the size kept as actions come and go is
// that of their definitions in one actions/register, as encoded. Issue
// #31 (adding n actions one at a time no longer encodes the set n times).
func Test_registryRegisterBytes(t *testing.T) {
	t.Parallel()
	r := newRegistry("p_")
	var as []Action
	for _, n := range []string{"a", "b", "c"} {
		a := Action{Name: n, Description: "Do " + n + ".", Schema: json.RawMessage(`{ "type" : "object" }`)}
		added, err := r.add([]Action{a})
		testutil.Success(t, err)
		r.commit(added)
		as = append(as, a)
	}
	r.remove([]string{"b"})
	_, _, err := r.set(append(as[:1:1], as[2], Action{Name: "d", Description: "D"}))
	testutil.Success(t, err)
	b, err := json.Marshal(wireActions(r.all()))
	testutil.Success(t, err)
	testutil.Equal(t, "bytes", r.registerBytes(nil), len(b)-2) // without the brackets
}

// Test_registerCostFlat: adding one action allocates as much into a set of
// 160 as into a set of 10: Register no longer encodes the whole set to
// check its size, which made adding n actions one at a time quadratic
// (BenchmarkScaleNeuroActions). Not parallel: it counts the process's
// allocations. Issue #31.
func Test_registerCostFlat(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates too")
	}
	at10, at160 := bytesPerRegister(t, 10), bytesPerRegister(t, 160)
	t.Logf("bytes allocated by one Register: %d into 10 actions, %d into 160", at10, at160)
	if at160 > 2*at10+1024 {
		t.Errorf("adding one action to 160 allocates %d bytes, to 10 %d: the cost grows with the set", at160, at10)
	}
}

// bytesPerRegister returns the bytes one Register allocates, on average
// over 16 calls, into a set of n actions.
func bytesPerRegister(t *testing.T, n int) uint64 {
	c, err := New("G", nil)
	testutil.Success(t, err)
	defer c.Close()
	add := func(i int) {
		testutil.Success(t, c.Register(Action{Name: "act_" + strconv.Itoa(i), Description: "An action of the game."}))
	}
	for i := range n {
		add(i)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 16 {
		add(n + i)
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / 16
}
