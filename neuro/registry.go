package neuro

import (
	"encoding/json"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// entry is one action in the desired set, checked and compiled.
type entry struct {
	a    Action
	sch  *jsonschema.Schema
	wire string // name on the wire (prefix + name)
	size int    // bytes of its definition in an actions/register
}

// sized sets e.size from e's definition on the wire.
func (e *entry) sized() *entry {
	b, _ := json.Marshal(wireAction{Name: e.wire, Description: e.a.Description, Schema: e.a.Schema})
	e.size = len(b)
	return e
}

// registry is the desired action set. It is passive: methods compute the
// minimal register/unregister diff and the caller sends it.
type registry struct {
	prefix string
	byName map[string]*entry // by local name
	order  []string          // local names, in registration order
	byWire map[string]*entry
	bytes  int // sum of the entries' sizes
}

func newRegistry(prefix string) *registry {
	return &registry{prefix: prefix, byName: map[string]*entry{}, byWire: map[string]*entry{}}
}

// check validates a and compiles its schema, without adding it.
func (r *registry) check(a Action) (*entry, error) {
	if err := CheckName(a.Name); err != nil {
		return nil, err
	}
	if a.Description == "" {
		return nil, &NameError{Name: a.Name, Reason: "description is required (Neuro reads it)"}
	}
	sch, err := compileSchema(a.Name, a.Schema)
	if err != nil {
		return nil, err
	}
	return (&entry{a: a, sch: sch, wire: r.prefix + a.Name}).sized(), nil
}

// add checks the actions and returns those that are new (to register),
// for commit to add. Re-adding an identical definition is a no-op; a
// different one is a *ConflictError.
func (r *registry) add(as []Action) ([]*entry, error) {
	var added []*entry
	seen := map[string]*Action{}
	for i := range as {
		a := &as[i]
		if prev, ok := seen[a.Name]; ok {
			if !sameDefinition(prev, a) {
				return nil, &ConflictError{Name: a.Name}
			}
			continue
		}
		seen[a.Name] = a
		if cur, ok := r.byName[a.Name]; ok {
			if !sameDefinition(&cur.a, a) {
				return nil, &ConflictError{Name: a.Name}
			}
			continue
		}
		e, err := r.check(*a)
		if err != nil {
			return nil, err
		}
		added = append(added, e)
	}
	return added, nil
}

// commit adds the entries add returned.
func (r *registry) commit(es []*entry) {
	for _, e := range es {
		r.put(e)
	}
}

// registerBytes is the size of the set's definitions in one
// actions/register with extra added: their sizes plus the commas between
// them. It takes no encoding, so that adding n actions one at a time
// stays linear in n (issue #31's scaling table).
func (r *registry) registerBytes(extra []*entry) int {
	n, count := r.bytes, len(r.order)+len(extra)
	for _, e := range extra {
		n += e.size
	}
	return n + max(count-1, 0)
}

// set makes as the whole desired set. It returns the wire names to
// unregister (removed or redefined) and the entries to register (new or
// redefined): the server keeps the first definition of a name, so a
// changed action is unregistered and registered again.
func (r *registry) set(as []Action) (unreg []string, reg []*entry, err error) {
	want := map[string]*entry{}
	var wantOrder []string
	for _, a := range as {
		if prev, ok := want[a.Name]; ok {
			if !sameDefinition(&prev.a, &a) {
				return nil, nil, &ConflictError{Name: a.Name}
			}
			continue
		}
		if cur, ok := r.byName[a.Name]; ok && sameDefinition(&cur.a, &a) {
			cur.a = a // same on the wire; keep the newest callbacks
			want[a.Name] = cur.sized()
		} else {
			e, err := r.check(a)
			if err != nil {
				return nil, nil, err
			}
			want[a.Name] = e
			reg = append(reg, e)
		}
		wantOrder = append(wantOrder, a.Name)
	}
	for _, n := range r.order {
		if w, ok := want[n]; !ok || w != r.byName[n] {
			unreg = append(unreg, r.byName[n].wire)
		}
	}
	r.byName, r.byWire, r.order, r.bytes = map[string]*entry{}, map[string]*entry{}, nil, 0
	for _, n := range wantOrder {
		r.put(want[n])
	}
	return unreg, reg, nil
}

func (r *registry) put(e *entry) {
	r.byName[e.a.Name] = e
	r.byWire[e.wire] = e
	r.order = append(r.order, e.a.Name)
	r.bytes += e.size
}

// remove drops the named actions and returns the wire names that were in
// the set. Unknown names are ignored.
func (r *registry) remove(names []string) []string {
	var out []string
	for _, n := range names {
		e, ok := r.byName[n]
		if !ok {
			continue
		}
		delete(r.byName, n)
		delete(r.byWire, e.wire)
		r.bytes -= e.size
		out = append(out, e.wire)
	}
	if len(out) > 0 { // one pass, however many names
		r.order = slices.DeleteFunc(r.order, func(x string) bool { return r.byName[x] == nil })
	}
	return out
}

// all returns every entry in registration order.
func (r *registry) all() []*entry {
	out := make([]*entry, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.byName[n])
	}
	return out
}

func (r *registry) names() []string { return slices.Clone(r.order) }

func wireActions(es []*entry) []wireAction {
	out := make([]wireAction, len(es))
	for i, e := range es {
		out[i] = wireAction{Name: e.wire, Description: e.a.Description, Schema: e.a.Schema}
	}
	return out
}
