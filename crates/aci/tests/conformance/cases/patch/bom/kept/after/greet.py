# -*- coding: utf-8 -*-
GREETING = "grüß dich"
NAME = "wörld"
