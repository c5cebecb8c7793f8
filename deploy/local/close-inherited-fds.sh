# Sourced by the start scripts: closes every descriptor above 2 this shell inherited, so the servers it
# starts in the background do not keep a caller's pipes or monitoring descriptors open (a caller waiting
# for those to close would wait forever).
for _fd in /proc/$$/fd/*; do
    _fd=${_fd##*/}
    if [[ $_fd =~ ^[0-9]+$ ]] && ((_fd > 2)); then eval "exec ${_fd}>&-" 2>/dev/null || true; fi
done
unset _fd
