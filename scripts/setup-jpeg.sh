#!/usr/bin/env bash
# libjpeg-turbo's TurboJPEG library (Debian's libturbojpeg0), which mlperf-host loads at run
# time to decode JPEGs as cv2.imread does (the ImageNet raw layout of `resnet`). Installed
# with apt-get when missing; prints where it is.
set -euo pipefail
# awk reads the whole list: an early exit would end ldconfig with SIGPIPE, which pipefail turns
# into a failure of this script (exit 141) whenever ldconfig had more to write.
find_library() {
    ldconfig -p 2>/dev/null | awk '/libturbojpeg\.so\.0 / && !found { print $NF; found = 1 }'
}
if [ -z "$(find_library)" ]; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -q libturbojpeg0 >&2 ||
        { "${sudo[@]}" apt-get update -q >&2 && "${sudo[@]}" apt-get install -y -q libturbojpeg0 >&2; }
fi
library=$(find_library)
[ -n "$library" ] || { echo "error: libturbojpeg.so.0 is not installed (apt-get install libturbojpeg0)" >&2; exit 1; }
echo "$library"
