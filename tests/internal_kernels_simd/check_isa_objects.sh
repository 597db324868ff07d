#!/bin/sh
# The per-ISA kernel files (src/cpu/arch/x86/, arm/) are compiled with AVX
# (ARM: dotprod) flags.
# Code from them must never be shared with baseline code through the linker:
# an inline function or template instantiation emitted as a weak (COMDAT)
# symbol could be the copy the linker keeps, and then baseline code would
# run AVX instructions on CPUs without them. Each of these objects may
# define only its fill_* entry point as a global symbol. The one exception
# is DW.ref.__gxx_personality_v0, a weak pointer to the C++ runtime's
# exception personality routine that objects with unwinding landing pads
# carry (the ASan build adds such pads): data, the same in every object,
# no code of the object's instruction set.
# usage: check_isa_objects.sh <object files...> (all of the library's; others are ignored)
status=0
checked=0
for obj in "$@"; do
  case "$obj" in
    */cpu/arch/x86/*|*/cpu/arch/arm/*) ;;
    *) continue ;;
  esac
  checked=$((checked + 1))
  bad=$(nm -C --defined-only "$obj" | awk '$2 ~ /^[A-Z]$/ && $2 != "U" && $3 != "DW.ref.__gxx_personality_v0" &&
    !($2 == "T" && $0 ~ /lmggml::cpu::arch::(x86|arm)::fill_/)')
  if [ -n "$bad" ]; then
    echo "FAIL: $obj exports symbols other than its fill_* function:"
    echo "$bad"
    status=1
  fi
done
if [ "$checked" -eq 0 ]; then
  echo "FAIL: no object of src/cpu/arch/x86 or arm was given"
  exit 1
fi
echo "checked $checked per-ISA objects"
exit $status
