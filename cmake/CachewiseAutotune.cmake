# cachewise_autotune(): provided by the tuner component (issue 7).
