// Reached through -I only (an angle-bracket include).
#pragma once
#define STRIDE_WORDS 2
