/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* An ELF section by name, through libelf: what tells a Go binary
 * (.go.buildinfo) and its function names (.gopclntab) to the software
 * probe and the QUIC stack finder alike. */
#ifndef CONNSCOPE_ELF_SECTION_H
#define CONNSCOPE_ELF_SECTION_H

#include <gelf.h>
#include <libelf.h>

/* The section of elf named want, its header in *sh; NULL when there is
 * none. shstrndx: elf_getshdrstrndx()'s. */
Elf_Scn *elf_section_named(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh);
/* Its contents: NULL when absent or it has none in the file (SHT_NOBITS). */
Elf_Data *elf_section_data(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh);

#endif
