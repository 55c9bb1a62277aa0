package items

import (
	"fmt"
	"strings"
)

// validateDialogue checks an item's history and references: every turn has a question and an answer,
// and only an open-ended item has more reference answers (a multiple-choice answer is a letter).
func (it *Item) validateDialogue() error {
	for i, t := range it.History {
		if strings.TrimSpace(t.Question) == "" || strings.TrimSpace(t.Answer) == "" {
			return fmt.Errorf("item %q: history turn %d needs a question and an answer", it.ItemID, i+1)
		}
	}
	if len(it.References) > 0 && len(it.Options) > 0 {
		return fmt.Errorf("item %q: references are for open-ended items (it has options)", it.ItemID)
	}
	for i, r := range it.References {
		if strings.TrimSpace(r) == "" {
			return fmt.Errorf("item %q: reference %d is empty", it.ItemID, i+1)
		}
	}
	return nil
}
