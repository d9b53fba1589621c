# build_digest.cmake - writes est_build.h for the fit cache (cache.c): a
# digest of what a fit depends on besides its input files, so that a
# build whose fit code differs never reads another build's cache entries.
# Run at build time (estimator/CMakeLists.txt), whenever a source changes.
#   -DOUT=path/est_build.h -DVERSION=x.y.z -DCOMPILER="id version"
#   -DFLAGS="the C flags" -DSOURCES="a.c;b.h;..."
set(all "${VERSION}\n${COMPILER}\n${FLAGS}\n")
foreach(f IN LISTS SOURCES)
  file(SHA256 "${f}" h)
  get_filename_component(name "${f}" NAME)
  string(APPEND all "${name} ${h}\n")
endforeach()
string(SHA256 digest "${all}")
set(text "/* Written by estimator/build_digest.cmake: do not edit. */
#define EST_BUILD_DIGEST \"${digest}\"
#define EST_CACHE_VERSION \"${VERSION}\"
")
# Rewritten only when it changes, so that cache.c is not recompiled for
# nothing.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${text}")
