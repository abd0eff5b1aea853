package card

// The Character Card V2 rules of validate.go, checked by the first pass of
// the canonicalizer as it closes each object the rules look into, so that
// Parse walks a card once instead of twice. It only answers whether a rule
// is broken (canon.invalid); the rare invalid card is then walked by
// validateCanonical, which lists the violations. The two must agree, which
// Test_checkCanonical_agrees checks on the random damage of
// Test_validateCanonical_reference.

// The levels of the document the rules look into.
const (
	lvNone    uint8 = iota
	lvRoot          // the card
	lvData          // /data
	lvBook          // /data/character_book
	lvEntries       // /data/character_book/entries: its elements are entries
	lvEntry         // an entry
	numLevels
)

// memberLevel is the level of the value of member key of an object at
// level.
func memberLevel(level uint8, key []byte) uint8 {
	switch {
	case level == lvRoot && string(key) == "data":
		return lvData
	case level == lvData && string(key) == "character_book":
		return lvBook
	case level == lvBook && string(key) == "entries":
		return lvEntries
	}
	return lvNone
}

// elementLevel is the level of the elements of an array at level.
func elementLevel(level uint8) uint8 {
	if level == lvEntries {
		return lvEntry
	}
	return lvNone
}

// How a rule checks a value.
const (
	ruleKind    = iota + 1 // the value is of kind want
	ruleStrings            // an array of strings
	ruleName               // a string that is not blank
	ruleText               // exactly text or text2 (canonical JSON)
)

// fieldRule is the rule for one member of an object at one level.
type fieldRule struct {
	how         uint8 // 0: no rule for this member
	want        byte  // ruleKind: '"', '{', '[', 't' (boolean) or '0' (number)
	required    bool
	bit         uint8
	text, text2 string
}

// The member names the rules know.
const (
	fNone = iota
	fSpec
	fSpecVersion
	fData
	fName
	fDescription
	fPersonality
	fScenario
	fFirstMes
	fMesExample
	fCreatorNotes
	fSystemPrompt
	fPostHistory
	fCreator
	fCharacterVersion
	fAlternateGreetings
	fTags
	fExtensions
	fCharacterBook
	fScanDepth
	fTokenBudget
	fRecursiveScanning
	fEntries
	fKeys
	fContent
	fEnabled
	fInsertionOrder
	fCaseSensitive
	fPriority
	fID
	fComment
	fSelective
	fConstant
	fSecondaryKeys
	fPosition
	numFields
)

// fieldOf returns the name's index; a switch on strings compiles to a
// binary search, where a map would hash.
func fieldOf(key []byte) int {
	switch string(key) {
	case "spec":
		return fSpec
	case "spec_version":
		return fSpecVersion
	case "data":
		return fData
	case "name":
		return fName
	case "description":
		return fDescription
	case "personality":
		return fPersonality
	case "scenario":
		return fScenario
	case "first_mes":
		return fFirstMes
	case "mes_example":
		return fMesExample
	case "creator_notes":
		return fCreatorNotes
	case "system_prompt":
		return fSystemPrompt
	case "post_history_instructions":
		return fPostHistory
	case "creator":
		return fCreator
	case "character_version":
		return fCharacterVersion
	case "alternate_greetings":
		return fAlternateGreetings
	case "tags":
		return fTags
	case "extensions":
		return fExtensions
	case "character_book":
		return fCharacterBook
	case "scan_depth":
		return fScanDepth
	case "token_budget":
		return fTokenBudget
	case "recursive_scanning":
		return fRecursiveScanning
	case "entries":
		return fEntries
	case "keys":
		return fKeys
	case "content":
		return fContent
	case "enabled":
		return fEnabled
	case "insertion_order":
		return fInsertionOrder
	case "case_sensitive":
		return fCaseSensitive
	case "priority":
		return fPriority
	case "id":
		return fID
	case "comment":
		return fComment
	case "selective":
		return fSelective
	case "constant":
		return fConstant
	case "secondary_keys":
		return fSecondaryKeys
	case "position":
		return fPosition
	}
	return fNone
}

// levelRules are the rules of one level, by field, and the bits of the
// required fields.
type levelRules struct {
	rules    [numFields]fieldRule
	required uint64
}

// rules mirrors validateCanonical, data, book and entry in validate.go.
var rules = func() (t [numLevels]levelRules) {
	add := func(level uint8, f int, r fieldRule) {
		lr := &t[level]
		r.bit = uint8(f)
		lr.rules[f] = r
		if r.required {
			lr.required |= 1 << r.bit
		}
	}
	kind := func(want byte, required bool) fieldRule {
		return fieldRule{how: ruleKind, want: want, required: required}
	}
	add(lvRoot, fSpec, fieldRule{how: ruleText, required: true, text: `"chara_card_v2"`, text2: `"chara_card_v2"`})
	add(lvRoot, fSpecVersion, fieldRule{how: ruleText, required: true, text: `"2.0"`, text2: `"2.0"`})
	add(lvRoot, fData, kind('{', true))

	for _, f := range []int{fDescription, fPersonality, fScenario, fFirstMes, fMesExample, fCreatorNotes, fSystemPrompt, fPostHistory, fCreator, fCharacterVersion} {
		add(lvData, f, kind('"', true))
	}
	add(lvData, fName, fieldRule{how: ruleName, required: true})
	add(lvData, fAlternateGreetings, fieldRule{how: ruleStrings, required: true})
	add(lvData, fTags, fieldRule{how: ruleStrings, required: true})
	add(lvData, fExtensions, kind('{', true))
	add(lvData, fCharacterBook, kind('{', false))

	add(lvBook, fName, kind('"', false))
	add(lvBook, fDescription, kind('"', false))
	add(lvBook, fScanDepth, kind('0', false))
	add(lvBook, fTokenBudget, kind('0', false))
	add(lvBook, fRecursiveScanning, kind('t', false))
	add(lvBook, fExtensions, kind('{', true))
	add(lvBook, fEntries, kind('[', true))

	add(lvEntry, fKeys, fieldRule{how: ruleStrings, required: true})
	add(lvEntry, fContent, kind('"', true))
	add(lvEntry, fExtensions, kind('{', true))
	add(lvEntry, fEnabled, kind('t', true))
	add(lvEntry, fInsertionOrder, kind('0', true))
	add(lvEntry, fCaseSensitive, kind('t', false))
	add(lvEntry, fName, kind('"', false))
	add(lvEntry, fPriority, kind('0', false))
	add(lvEntry, fID, kind('0', false))
	add(lvEntry, fComment, kind('"', false))
	add(lvEntry, fSelective, kind('t', false))
	add(lvEntry, fConstant, kind('t', false))
	add(lvEntry, fSecondaryKeys, fieldRule{how: ruleStrings, required: false})
	add(lvEntry, fPosition, fieldRule{how: ruleText, text: `"before_char"`, text2: `"after_char"`})
	return t
}()

// kindOf classifies a canonical value by its first byte, as the
// validator's kind does.
func kindOf(b byte) byte {
	switch b {
	case '"', '{', '[', 'n':
		return b
	case 't', 'f':
		return 't'
	}
	return '0'
}

// checkObject checks the members ms of a closed object at level (ms in
// any order) and sets c.invalid when a rule is broken.
func (c *canon) checkObject(level uint8, ms []member) {
	if c.invalid || level == lvEntries {
		return // lvEntries: the book's rule reports an entries object
	}
	// An object of a shape seen before (every lorebook entry, usually)
	// has its checks in the key order cache.
	if e := c.shape; e != nil {
		sc := e.checksAt(level)
		if !sc.required {
			c.invalid = true
			return
		}
		for _, k := range sc.checks {
			m := &ms[k.index]
			if k.kind != 0 && m.kind == k.kind {
				continue // the common rule, inline
			}
			if !c.checkMember(&rules[level].rules[k.field], m) {
				c.invalid = true
				return
			}
		}
		return
	}
	lr := &rules[level]
	var seen uint64
	for i := range ms {
		m := &ms[i]
		r := &lr.rules[fieldOf(c.key(m))]
		if r.how == 0 {
			continue
		}
		seen |= 1 << r.bit
		if !c.checkMember(r, m) {
			c.invalid = true
			return
		}
	}
	if seen&lr.required != lr.required {
		c.invalid = true
	}
}

// checkMember reports whether member m keeps rule r.
func (c *canon) checkMember(r *fieldRule, m *member) bool {
	switch r.how {
	case ruleKind:
		return m.kind == r.want
	case ruleStrings:
		return m.strs
	case ruleName:
		return m.kind == '"' && !blank(c.output(m.vs+1, m.end-1))
	case ruleText:
		v := c.output(m.vs, m.end)
		return string(v) == r.text || string(v) == r.text2
	}
	return true
}

// shapeChecks are the rules of an object shape at one level: the members
// a rule applies to, and whether the shape has every required field.
type shapeChecks struct {
	known    bool // computed for level
	level    uint8
	required bool
	checks   []memberCheck

	// For predictedObject: the kind each member must have (0: any),
	// the members that must be arrays of strings (bits by index), and
	// the checks of the rest of the rules.
	want  [maxOrderKeys]byte
	strs  uint64
	other []memberCheck
}

// memberCheck is a rule of a shape: member index, field field, and the
// kind the member must have when the rule asks only that.
type memberCheck struct{ index, field, kind uint8 }

// checksAt returns the checks of e's shape at level, computed on the
// first object of the shape at that level, from e's keys (those of the
// object, in its order).
func (e *orderEntry) checksAt(level uint8) *shapeChecks {
	sc := &e.checks
	if sc.known && sc.level == level {
		return sc
	}
	lr := &rules[level]
	sc.known, sc.level, sc.checks, sc.other = true, level, sc.checks[:0], sc.other[:0]
	sc.want, sc.strs = [maxOrderKeys]byte{}, 0
	var seen uint64
	prev := 0
	for i, end := range e.ends {
		f := fieldOf(e.keys[prev:end])
		prev = end
		if r := &lr.rules[f]; r.how != 0 {
			seen |= 1 << r.bit
			k := memberCheck{index: uint8(i), field: uint8(f)}
			switch r.how {
			case ruleKind:
				k.kind = r.want
				sc.want[i] = r.want
			case ruleStrings:
				sc.strs |= 1 << i
			default:
				sc.other = append(sc.other, k)
			}
			sc.checks = append(sc.checks, k)
		}
	}
	sc.required = seen&lr.required == lr.required
	return sc
}
