package neuro

import (
	"encoding/json"
	"slices"
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
	testutil.Equal(t, "removed", slices.Equal(r.remove([]string{"a", "zz"}), []string{"a"}), true)
}
