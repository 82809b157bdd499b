// cli/text_file.cpp: see text_file.h.
#include "cli/text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/error.h"

namespace folio::cli {

std::string read_text_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error("cannot open text file " + path + ": " + std::strerror(errno));
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f.get());
    data.append(buf, n);
    if (n < sizeof buf) {
      if (std::ferror(f.get())) {
        throw Error("cannot read text file " + path + ": " + std::strerror(errno));
      }
      return data;
    }
  }
}

}  // namespace folio::cli
