#!/bin/sh
# libc-state.sh LIBC_A OUTPUT AR OBJCOPY GLUE_O...
#
# Builds libstrand_libc.a: glibc's own objects for the libc functions whose
# state is process-wide (getopt, rand/random, the drand48 family, strtok,
# the static results of localtime/gmtime/ctime, hsearch's table),
# taken from the system's static libc (LIBC_A, the libc.a that matches the
# libc.so programs run with), plus the GLUE_O objects (privatize/libc_glue.c,
# privatize/libc_asctime.c).  mpicc
# links it into every program, so each rank's copy of the program has its
# own getopt/rand/strtok state, with glibc's exact code (DESIGN §4 trap 8).
#
# Only the objects holding the state are taken; the reentrant functions they
# call (random_r, erand48_r, strtok_r, ...) keep coming from libc.so, under
# their public names.  What the objects need that libc.so does not export
# for a shared object goes to the glue, renamed strand_libc_*.
set -eu
libc_a=$1
output=$2
ar=$3
objcopy=$4
shift 4

members="getopt.o getopt1.o random.o rand.o strtok.o drand48-iter.o
    drand48.o erand48.o lrand48.o nrand48.o mrand48.o jrand48.o
    srand48.o seed48.o lcong48.o
    erand48_r.o nrand48_r.o jrand48_r.o srand48_r.o seed48_r.o lcong48_r.o
    localtime.o gmtime.o ctime.o hsearch.o"

work=$(mktemp -d "${TMPDIR:-/tmp}/strand-libc.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && "$ar" x "$libc_a" $members)

# Inside libc.a, calls between libc's parts are hidden references (resolved
# within libc), and getopt reaches stderr and its text domain PC-relatively:
# a shared object can make neither kind of reference to libc.so.  Each such
# name is redirected to a hidden strand_libc_* in the glue, which calls
# libc.so's public function or stands for glibc's internal one.
redirect() { # object name...: name -> strand_libc_name (leading _ dropped)
    object=$1
    shift
    flags=
    for name; do
        flags="$flags --redefine-sym $name=strand_libc_$(echo "$name" | sed 's/^_*//')"
    done
    "$objcopy" $flags "$work/$object"
}
redirect getopt.o stderr _libc_intl_domainname __fxprintf_nocancel __libc_alloca_cutoff \
    strncmp strlen strchr __dcgettext getenv
redirect random.o __lll_lock_wait_private __lll_lock_wake_private \
    __random_r __srandom_r __initstate_r __setstate_r
redirect strtok.o __strtok_r
redirect localtime.o __tz_convert
redirect gmtime.o __tz_convert
# the _r variants have no state: the glue calls libc.so's, so these must not
# take their names in the program
"$objcopy" -L localtime_r -L __localtime_r "$work/localtime.o"
"$objcopy" -L gmtime_r -L __gmtime_r "$work/gmtime.o"
redirect hsearch.o __hsearch_r __hcreate_r __hdestroy_r

# What is still undefined must be found inside the archive or be a default
# (not hidden) reference to libc.so; another glibc version may differ.
hidden=$(for m in $members; do
    readelf -sW "$work/$m" | awk '$7 == "UND" && $5 == "GLOBAL" && $6 != "DEFAULT" {print $8}'
done | sort -u)
for sym in $hidden; do
    case $sym in
    strand_libc_* | __libc_drand48_data | __drand48_iterate | __random | _tmbuf | \
        localtime | asctime | \
        __erand48_r | __nrand48_r | __jrand48_r | __srand48_r | __seed48_r | __lcong48_r) ;;
    *)
        echo "libc-state.sh: $libc_a makes a hidden reference to $sym, which a shared object cannot make (a glibc other than 2.36?)" >&2
        exit 1
        ;;
    esac
done

rm -f "$output.tmp"
(cd "$work" && "$ar" rc objects.a $members)
cp "$work/objects.a" "$output.tmp"
"$ar" r "$output.tmp" "$@"
"$ar" s "$output.tmp"
mv "$output.tmp" "$output"
