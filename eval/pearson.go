package eval

import (
	"errors"
	"fmt"
	"math"
)

// Pearson is the sample correlation coefficient of x and y (Bogin et al.
// Table 5). It needs two or more points and variation in both.
func Pearson(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		return 0, fmt.Errorf("%d x values but %d y values", len(x), len(y))
	}
	if len(x) < 2 {
		return 0, errors.New("correlation needs at least two points")
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, errors.New("correlation is undefined: all x or all y values are equal")
	}
	return sxy / math.Sqrt(sxx*syy), nil
}
