/* version.h - the release version, GPATH_VERSION ("0.2.0"). The one source is the top-level VERSION
 * file: the Makefile passes it as -DGPATH_VERSION="..."; a build that bypasses the Makefile gets
 * "unknown" rather than a second copy of the number that could drift. */
#ifndef GP_VERSION_H
#define GP_VERSION_H
#ifndef GPATH_VERSION
#define GPATH_VERSION "unknown"
#endif
#endif
