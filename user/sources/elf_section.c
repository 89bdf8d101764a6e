// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* An ELF section by name (elf_section.h): the section headers walked once
 * per look-up, no section's contents read but the one asked for. */
#include <string.h>
#include "elf_section.h"

Elf_Scn *elf_section_named(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, sh) && (name = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(name, want))
			return scn;
	}
	return NULL;
}

Elf_Data *elf_section_data(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_section_named(elf, shstrndx, want, sh);

	return scn && sh->sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
}
