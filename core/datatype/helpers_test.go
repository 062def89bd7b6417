package datatype

import (
	"fmt"
	"sort"
	"strconv"
)

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
func itoa(i int) string                 { return strconv.Itoa(i) }

func sortStrings(s []string) { sort.Strings(s) }
