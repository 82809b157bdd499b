# The chat page (GET / and /ui/*, server/web_assets.h): folio's own files in
# this folder plus Debian's marked (markdown) and highlight.js (code), all
# compiled into server/web_assets.cpp, so the page works offline. Debian's
# files are read from the system at configure time and never copied into the
# tree; -DFOLIO_MARKED_JS=... etc. point elsewhere on other systems.
include(${PROJECT_SOURCE_DIR}/cmake/FolioEmbed.cmake)

# folio_debian_js(<var> <package> <file>): the path of a file Debian's
# <package> installs, or a configure error naming the package.
function(folio_debian_js var package file)
  find_file(${var} NAMES ${file} PATHS /usr/share/javascript NO_DEFAULT_PATH
            DOC "${file} from Debian's ${package} (embedded in the chat page)")
  if(NOT ${var} OR NOT EXISTS "${${var}}")
    message(FATAL_ERROR "${file} not found under /usr/share/javascript (${var}=${${var}}): "
                        "install Debian's ${package} (scripts/setup does: apt-get install "
                        "${package}), or pass -D${var}=/path/to/its/copy")
  endif()
endfunction()
folio_debian_js(FOLIO_MARKED_JS libjs-marked marked/marked.min.js)
folio_debian_js(FOLIO_HIGHLIGHT_JS libjs-highlight.js highlight.js/highlight.min.js)
folio_debian_js(FOLIO_HIGHLIGHT_CSS libjs-highlight.js highlight.js/styles/github.css)

set(webui ${CMAKE_CURRENT_SOURCE_DIR}/webui)
# URL path, then file. "/" is the page; everything it loads is under /ui/.
set(FOLIO_WEBUI_FILES
    /                     ${webui}/index.html
    /ui/style.css         ${webui}/style.css
    /ui/favicon.svg       ${webui}/favicon.svg
    /ui/app.js            ${webui}/app.js
    /ui/chat_stream.js    ${webui}/chat_stream.js
    /ui/store.js          ${webui}/store.js
    /ui/render.js         ${webui}/render.js
    /ui/marked.min.js     ${FOLIO_MARKED_JS}
    /ui/highlight.min.js  ${FOLIO_HIGHLIGHT_JS}
    /ui/highlight.css     ${FOLIO_HIGHLIGHT_CSS})

set(FOLIO_WEBUI_ARRAYS "")
set(FOLIO_WEBUI_TABLE "")
set(index 0)
list(LENGTH FOLIO_WEBUI_FILES count)
while(index LESS count)
  list(GET FOLIO_WEBUI_FILES ${index} url)
  math(EXPR next "${index} + 1")
  list(GET FOLIO_WEBUI_FILES ${next} path)
  get_filename_component(ext ${path} LAST_EXT)
  if(ext STREQUAL ".html")
    set(type "text/html; charset=utf-8")
  elseif(ext STREQUAL ".css")
    set(type "text/css; charset=utf-8")
  elseif(ext STREQUAL ".js")
    set(type "text/javascript; charset=utf-8")
  elseif(ext STREQUAL ".svg")
    set(type "image/svg+xml")
  else()
    message(FATAL_ERROR "${path}: no content type known for '${ext}' (webui/webui.cmake)")
  endif()
  folio_embed_bytes(bytes ${path})
  # A strong ETag: the content's hash, so a browser revalidates cheaply (304).
  file(SHA256 ${path} sum)
  string(SUBSTRING ${sum} 0 20 sum)
  math(EXPR n "${index} / 2")
  string(APPEND FOLIO_WEBUI_ARRAYS "constexpr unsigned char kAsset${n}[] = {\n${bytes}};\n")
  string(APPEND FOLIO_WEBUI_TABLE "      {\"${url}\", \"${type}\", R\"(\"${sum}\")\",\n"
                                  "       view(kAsset${n}, sizeof kAsset${n})},\n")
  math(EXPR index "${index} + 2")
endwhile()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/web_assets.cpp.in
               ${CMAKE_CURRENT_BINARY_DIR}/web_assets.cpp @ONLY)
