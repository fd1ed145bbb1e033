// ISA-L's igzip (Debian: libisal-dev; Homebrew: isa-l): the inflate of large gzip files.
#include <isa-l/igzip_lib.h>
