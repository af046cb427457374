package scan

import (
	"fmt"
	"strings"
)

// Parse reads a command of the extended grammar. Words are separated by
// white space. Errors name the offending word by its 1-based position.
func Parse(text string) (Command, error) {
	words := strings.Fields(text)
	if len(words) == 0 {
		return Command{}, fmt.Errorf("empty command")
	}
	var c Command
	pos := 0
	for {
		p, err := parsePart(words, &pos)
		if err != nil {
			return Command{}, err
		}
		c.Parts = append(c.Parts, p)
		if pos == len(words) {
			return c, nil
		}
		switch words[pos] {
		case "and":
			c.Conjs = append(c.Conjs, And)
		case "after":
			c.Conjs = append(c.Conjs, After)
		default:
			return Command{}, wordErr(words, pos, `"and" or "after"`)
		}
		pos++
		if pos == len(words) {
			return Command{}, fmt.Errorf("command ends after %q: want a phrase", words[pos-1])
		}
	}
}

// MustParse is Parse for commands known to be valid (tests, examples); it
// panics on error.
func MustParse(text string) Command {
	c, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return c
}

func wordErr(words []string, pos int, want string) error {
	return fmt.Errorf("word %d %q: want %s", pos+1, words[pos], want)
}

// parsePart reads one phrase P starting at words[*pos].
func parsePart(words []string, pos *int) (Part, error) {
	i := *pos
	var p Part
	switch words[i] {
	case "walk":
		p.Verb = Walk
	case "look":
		p.Verb = Look
	case "run":
		p.Verb = Run
	case "jump":
		p.Verb = Jump
	case "turn":
		p.Verb = Turn
	default:
		return p, wordErr(words, i, "an action (walk, look, run, jump) or turn")
	}
	i++
	p.Form = Bare
	if i < len(words) {
		switch words[i] {
		case "opposite":
			p.Form = Opposite
			i++
		case "around":
			p.Form = Around
			i++
		case "left", "right":
			p.Form = Plain
		}
	}
	if p.Form != Bare {
		if i == len(words) {
			return p, fmt.Errorf("command ends after %q: want left or right", words[i-1])
		}
		switch words[i] {
		case "left":
			p.Dir = Left
		case "right":
			p.Dir = Right
		default:
			return p, wordErr(words, i, "left or right")
		}
		i++
	} else if p.Verb == Turn {
		if i == len(words) {
			return p, fmt.Errorf(`command ends after "turn": want a direction`)
		}
		return p, wordErr(words, i, `a direction after "turn"`)
	}
	p.Times = 1
	if i < len(words) {
		switch words[i] {
		case "twice":
			p.Times = 2
			i++
		case "thrice":
			p.Times = 3
			i++
		}
	}
	*pos = i
	return p, nil
}
