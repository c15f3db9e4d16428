// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * truth-virt: a C++ virtual call on a freed object, for value recovery's
 * truth test (test-recover.py; truth.c holds the C cases).  A Square is
 * deleted and its 16-byte chunk comes back as a two-word array whose
 * first word, BAD, becomes the stale object's vtable pointer: the
 * virtual call loads its target from BAD + 16 and faults there.
 */
#include <cstdlib>

static const unsigned long BAD = 0x0000414141414141UL;	// canonical, unmapped

static volatile long sink;

struct Shape {
	virtual ~Shape() {}
	virtual long area() const = 0;
};

struct Square : Shape {
	explicit Square(long s) : side(s) {}
	long area() const override { return side * side; }
	long side;
};

// Before main, where the truth test starts stepping: malloc's first call
// and the lazy binding of operator new and delete (libstdc++ is not
// linked -z now), as in a program that has run a while before its crash.
static void __attribute__((constructor)) warm_up()
{
	Shape *volatile s = new Square(1);	// volatile: not elided at -O2
	unsigned long *volatile a = new unsigned long[2];

	delete s;
	delete[] a;
}

static __attribute__((noinline)) long measure(const Shape *s)
{
	return s->area();
}

int main()
{
	Shape *s = new Square(3);

	sink = measure(s);
	delete s;
	unsigned long *words = new unsigned long[2];	// the same chunk
	words[0] = BAD;
	words[1] = 5;
	sink = (long)words;
	return (int)measure(s);		// the stale object: vptr = BAD
}
