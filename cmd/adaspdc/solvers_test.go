package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adaspdc/adaspdc/engine"
)

// TestSolversListsEvery: one paragraph per registered solver, each with its
// name first, every line within listingWidth columns, and every word of
// the solver's description present.
func TestSolversListsEvery(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := runSolvers(nil, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	paras := strings.Split(strings.TrimSpace(out.String()), "\n\n")
	solvers := append(engine.Solvers(), engine.MultinomialSolvers()...)
	if len(paras) != len(solvers) {
		t.Fatalf("%d paragraphs for %d solvers:\n%s", len(paras), len(solvers), out.String())
	}
	for i, s := range solvers {
		if f := strings.Fields(paras[i]); len(f) == 0 || f[0] != string(s.Name) {
			t.Errorf("paragraph %d = %q, want it to start with %s", i, paras[i], s.Name)
		}
		words := strings.Join(strings.Fields(paras[i]), " ")
		for _, want := range []string{s.Summary, s.Losses, s.Regularizers} {
			if !strings.Contains(words, strings.Join(strings.Fields(flagWords(want)), " ")) {
				t.Errorf("%s: %q is missing from\n%s", s.Name, want, paras[i])
			}
		}
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > listingWidth {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if strings.Contains(out.String(), "order it picks") {
		t.Error("the listing claims to be in the order train picks solvers")
	}
	if err := runSolvers([]string{"extra"}, &out, &errOut); err == nil {
		t.Error("a positional argument was accepted")
	}
}
